import { expect, test } from "bun:test";
import { createServer } from "node:net";
import { loadNet } from "../../src/net/net.ts";
import { connectControl, establishFailure, resolveTest } from "./control-connection.ts";
import { parseNetperfArgs } from "./netperf-args.ts";
import type { NetperfPlan } from "./plan.ts";

const plan = (argv: string[]): NetperfPlan => {
  const cmd = parseNetperfArgs(argv);
  if (cmd.kind !== "run" && cmd.kind !== "classic") throw new Error(`expected a test, got ${cmd.kind}`);
  return cmd.plan;
};

/** A loopback port nothing listens on: one the kernel gave a listener that is closed again. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

test("the control host and the test -H/-L names are resolved, for omni and the classic tests alike", async () => {
  for (const name of ["omni", "TCP_CC"]) {
    const r = await resolveTest(plan(["-t", name, "-H", "localhost", "-4", "--", "-H", "localhost", "-L", "localhost", "-4"]));
    expect(r).toMatchObject({ ip: "127.0.0.1", dataFamily: "ipv4", plan: { remoteDataAddress: "127.0.0.1", localDataAddress: "127.0.0.1", host: "localhost" } });
  }
});

test("a refused control connection prints netperf's establish_control lines and ends 255; Ctrl+C while connecting, one line and 1", async () => {
  const net = await loadNet();
  const port = await closedPort();
  const p = plan(["-H", "127.0.0.1", "-p", String(port)]);
  const printed = { out: "", err: "" };
  const print = { out: (t: string) => void (printed.out += t), err: (t: string) => void (printed.err += t) };
  const handlers = { data: () => {}, closed: () => {} };
  const io = { net, out: print.out, err: print.err, signal: new AbortController().signal };
  expect(await connectControl(io, p, "127.0.0.1", handlers, print)).toBe(255);
  expect(printed).toEqual({ out: establishFailure("127.0.0.1", "127.0.0.1", port), err: "" });

  printed.out = "";
  const aborted = AbortSignal.abort();
  expect(await connectControl({ ...io, signal: aborted }, p, "127.0.0.1", handlers, print)).toBe(1);
  expect(printed).toEqual({ out: "", err: `netperf: interrupted while connecting to 127.0.0.1 port ${port}\n` });
});
