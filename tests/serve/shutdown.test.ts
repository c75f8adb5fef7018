import { afterEach, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { freePorts, spawnProc, type Proc } from "../support/processes.ts";
import { hasStock, serveReady, spawnServe } from "./harness.ts";

/**
 * One SIGINT (or SIGTERM) ends `anyperf serve` within seconds after stock clients have come and gone, and with silent
 * clients connected: every embedded server's close() must settle (serve waits 5 s at most for each, see
 * close-within.ts), and nothing left behind may hold the process. Reported once: serve ran on for minutes after the
 * first signal once iperf3, iperf and netperf TCP_RR had each run a test, until SIGKILL. Ports 18500-18699 (free
 * ones picked at run time).
 */

const H = "127.0.0.1";
let serve: Proc | undefined;
afterEach(() => serve?.kill("SIGKILL"));

/** Milliseconds from `signal` to the exit, and the exit. */
async function signalled(p: Proc, signal: NodeJS.Signals): Promise<{ ms: number; code: number | null; out: string }> {
  const t0 = performance.now();
  p.kill(signal);
  const f = await Promise.race([p.done, new Promise<undefined>((r) => setTimeout(r, 10_000))]);
  return { ms: performance.now() - t0, code: f?.code ?? null, out: `${p.stdout()}\n${p.stderr()}` };
}

/** A connection that says nothing, held open until the test ends. */
function idle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: H, port }, () => resolve(s));
    s.on("error", reject);
  });
}

async function ok(argv: string[]): Promise<void> {
  const f = await spawnProc(argv, 30_000).done;
  if (f.code !== 0) throw new Error(`${argv.join(" ")} exited ${f.code}:\n${f.stdout}\n${f.stderr}`);
}

describe.skipIf(!hasStock())("anyperf serve ends on one signal after stock clients", () => {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    test(`iperf3, iperf and netperf TCP_RR one after another, then one ${signal}: exit ${code} within 3 s`, async () => {
      const base = freePorts(18500, 18600, 4);
      const [native, iperf3, iperf, netserver] = [base, base + 1, base + 2, base + 3];
      serve = spawnServe(["-p", `${native}`, "--iperf3", `${iperf3}`, "--iperf", `${iperf}`, "--netserver", `${netserver}`, "--ntttcp", "off", "-B", H], 90_000);
      await serveReady(serve, 4, 30_000);
      await ok(["iperf3", "-c", H, "-p", `${iperf3}`, "-t", "2"]);
      await ok(["iperf", "-c", H, "-p", `${iperf}`, "-t", "2"]);
      await ok(["netperf", "-H", H, "-p", `${netserver}`, "-t", "TCP_RR", "-l", "2"]);
      const r = await signalled(serve, signal);
      expect(r.code, r.out).toBe(code);
      expect(r.ms, r.out).toBeLessThan(3_000);
    }, 90_000);
  }

  test("a silent client connected to every server: one SIGINT still ends serve within 3 s, exit 130", async () => {
    const base = freePorts(18600, 18700, 4);
    const ports = [base, base + 1, base + 2, base + 3];
    serve = spawnServe(["-p", `${ports[0]}`, "--iperf3", `${ports[1]}`, "--iperf", `${ports[2]}`, "--netserver", `${ports[3]}`, "--ntttcp", "off", "-B", H], 90_000);
    await serveReady(serve, 4, 30_000);
    const silent = await Promise.all(ports.map(idle));
    try {
      const r = await signalled(serve, "SIGINT");
      expect(r.code, r.out).toBe(130);
      expect(r.ms, r.out).toBeLessThan(3_000);
    } finally {
      for (const s of silent) s.destroy();
    }
  }, 60_000);
});
