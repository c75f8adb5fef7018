import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { freePorts, type Proc } from "../support/processes.ts";
import { expectOk, linuxTotalBytes, pair, spawnOurs } from "../interop/ntttcp-harness.ts";
import { figures, serveReady, spawnServe } from "./harness.ts";

/**
 * An anyperf ntttcp sender's total and its receiver's agree within what was in flight (issue 25: `anyperf serve`
 * counted 9–25 % more than the sender sent, the second the sender kept sending after its own window, until its close
 * ended serve's test). In flight at the end: at most each connection's send buffer and receive buffer, at the
 * kernel's ceilings (tcp_wmem, tcp_rmem). At 1 thread and at 32 (8 ports × 4), to serve and to `ntttcp -r`.
 */

const H = "127.0.0.1";
const ceiling = (f: string) => Number(readFileSync(`/proc/sys/net/ipv4/${f}`, "utf8").trim().split(/\s+/)[2]);
const inFlight = (connections: number) => connections * (ceiling("tcp_wmem") + ceiling("tcp_rmem"));
const LAYOUTS = [
  { threads: 1, args: "-P 1 -n 1" },
  { threads: 32, args: "-P 8 -n 4" },
];
const words = (s: string) => s.split(/\s+/).filter(Boolean);

function expectReconciled(sent: number, received: number, connections: number): void {
  expect(sent).toBeGreaterThan(0);
  expect(Math.abs(sent - received)).toBeLessThanOrEqual(inFlight(connections));
}

describe.skipIf(process.platform !== "linux")("an anyperf ntttcp sender's total reconciles with its receiver's", () => {
  let serve: Proc;
  let base = 0;
  beforeAll(async () => {
    base = freePorts(34401, 34899, 16, [-1, 100]);
    serve = spawnServe(["-p", `${base + 200}`, "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", `${base}`, "-B", H], 300_000);
    await serveReady(serve, 2);
  });
  afterAll(() => serve?.kill());
  const served = () => figures(serve.stdout(), /\[ntttcp\] .*total bytes\t:(\d+)/);

  // A -N sender: nothing on the wire says when its test ends, so serve's ends at its close.
  for (const { threads, args } of LAYOUTS) {
    test(`→ anyperf serve, ${threads} thread(s), -N`, async () => {
      const before = served().length;
      const tx = await spawnOurs(words(`-s${H} ${args} -N -t 2 -p ${base}`)).done;
      expectOk(tx);
      for (let i = 0; i < 100 && served().length === before; i++) await Bun.sleep(50);
      expectReconciled(linuxTotalBytes(tx.stdout), served()[before]!, threads);
    }, 60_000);
  }
});

describe.skipIf(process.platform !== "linux")("an anyperf ntttcp sender → anyperf ntttcp -r", () => {
  for (const { threads, args } of LAYOUTS) {
    test(`${threads} thread(s), -N`, async () => {
      const port = freePorts(34901, 35399, 8, [-1]);
      const ports = Number(args.split(" ")[1]);
      const rx = words(`-r${H} -P ${ports} -N -t 2 -p ${port}`);
      const { rx: r, tx } = await pair(rx, words(`-s${H} ${args} -N -t 2 -p ${port}`), { delayMs: 1500, limitMs: 40_000 });
      expectOk(r, tx);
      expectReconciled(linuxTotalBytes(tx.stdout), linuxTotalBytes(r.stdout), threads);
    }, 60_000);
  }
});
