import { expect, test } from "bun:test";
import { anyperf, dump, interruptAfter, stock, waitListening } from "./harness.ts";

/**
 * `anyperf netperf` and `anyperf netserver` under Ctrl+C and SIGTERM. netperf 2.7.0 takes SIGINT as "time is up":
 * the test ends early, prints its result, and the exit status is the test's own (0); SIGTERM kills stock netperf
 * silently, ours still prints what it measured and exits 143. netserver ends with 130/143 and closes its tests.
 * Ports 20400-20499.
 */

const T = 30_000;
/** The TCP_STREAM result row: sizes, elapsed seconds, throughput. */
const resultRow = /^\s*\d+\s+\d+\s+\d+\s+([\d.]+)\s+([\d.]+)\s*$/m;

test("netperf against stock netserver: SIGINT reports the shortened test and exits 0; SIGTERM reports and exits 143", async () => {
  const srv = stock("netserver", ["-D", "-p", "20401"]);
  try {
    await waitListening(20401);
    const args = ["netperf", "-H", "127.0.0.1", "-p", "20401", "-l", "30"];
    const [a, b] = await Promise.all([interruptAfter(anyperf(args), 1800, "SIGINT"), interruptAfter(anyperf(args), 1800, "SIGTERM")]);
    for (const [f, code] of [[a, 0], [b, 143]] as const) {
      expect(f.code, dump(f)).toBe(code);
      const m = resultRow.exec(f.stdout);
      expect(m, dump(f)).not.toBeNull();
      expect(Number(m![1])).toBeLessThan(5);
      expect(Number(m![2])).toBeGreaterThan(0);
    }
  } finally {
    srv.kill();
  }
}, T);

test("netserver -D: SIGTERM mid-test ends the server at once (143) and the stock client's test with it", async () => {
  const srv = anyperf(["netserver", "-D", "-p", "20402"]);
  await waitListening(20402);
  const cl = stock("netperf", ["-H", "127.0.0.1", "-p", "20402", "-l", "30"]);
  try {
    const f = await interruptAfter(srv, 1500, "SIGTERM");
    expect(f.code, dump(f)).toBe(143);
    expect(f.afterSignalMs!).toBeLessThan(3000);
    const c = await cl.done;
    // The client's test cannot finish without its server: it ends now instead of after 30 s.
    expect(c.code).not.toBe(0);
  } finally {
    srv.kill();
    cl.kill();
  }
}, T);

test("idle netserver -D: SIGINT exits 130", async () => {
  const srv = anyperf(["netserver", "-D", "-p", "20403"]);
  await waitListening(20403);
  const f = await interruptAfter(srv, 0, "SIGINT");
  expect(f.code, dump(f)).toBe(130);
}, T);
