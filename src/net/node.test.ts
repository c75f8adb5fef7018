import { expect, test } from "bun:test";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const PROBE = new URL("./testdata/node-adapter-probe.ts", import.meta.url).pathname;

test("node adapter under Deno: sync listen port and errors, UDP in order, bounded queue, flush on close", async () => {
  const p = Bun.spawn([DENO, "run", "--allow-all", PROBE], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) console.error(err);
  expect(code).toBe(0);
  const r = JSON.parse(out);
  // Runners read the port right after listen() and expect bind errors thrown there, with their code.
  expect(r.listen.port).toBeGreaterThan(0);
  expect(r.listen.inUse).toBe("EADDRINUSE");
  expect(r.listen.echoed).toBe("ping");
  // Loopback may drop under load, but never reorders or repeats: each datagram left with the stamp it had.
  expect(r.ordered.sent).toBe(3000);
  expect(r.ordered.received).toBeGreaterThan(0);
  expect(r.ordered.inversions).toBe(0);
  expect(r.backpressure.accepted).toBeGreaterThan(0);
  expect(r.backpressure.accepted).toBeLessThan(10_000);
  expect(r.backpressure.drainsBeforeClose).toBeGreaterThan(0);
  expect(r.backpressure.tailAccepted).toBe(5);
  expect(r.backpressure.tailReceived).toBe(5);
}, 60_000);
