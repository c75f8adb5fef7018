/**
 * Issue 25 item 2, iperf3: the socket options a stock client sends or a stock server applies are set on our data
 * sockets too, checked by reading them back from the kernel (`ss`, tests/support/ss.ts) while the test runs, with
 * stock 3.12 and trixie's 3.18 on the other end. Ports 36400-36499.
 */
import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { dataSockets, ssSockets, type SsSocket } from "../support/ss.ts";
import { hasStockIperf3, hasTrixieIperf3, json, ours, stock, trixie, waitListening, type Finished, type Proc } from "./iperf3-harness.ts";

const T = 60_000;
let nextPort = 36400;
const port = () => {
  const p = freePorts(nextPort, 36500, 1);
  nextPort = p + 1;
  return p;
};

/**
 * Runs a test and reads the data sockets of the end under `watch` while it moves data: the document the client
 * printed, and those sockets as the kernel holds them.
 */
async function run(server: (a: string[]) => Proc, client: (a: string[]) => Proc, watch: "server" | "client", clientArgs: string[], host = "127.0.0.1"): Promise<{ client: Finished; sockets: SsSocket[] }> {
  const p = port();
  const srv = server(["-s", "-p", String(p)]);
  try {
    await waitListening(p);
    const cli = client(["-c", host, "-p", String(p), "-J", ...clientArgs]);
    const sockets = await dataSockets((watch === "server" ? srv : cli).pid, p, 100_000);
    return { client: await cli.done, sockets };
  } finally {
    srv.kill();
    await srv.done;
  }
}

const receivedBps = (f: Finished) => (json(f).end.sum_received as Record<string, number>).bits_per_second!;

describe.skipIf(!hasStockIperf3())("iperf3 data-socket options against stock 3.12", () => {
  test("--fq-rate on TCP: our client's data socket has SO_MAX_PACING_RATE and the stock server receives ~50 Mbit/s", async () => {
    const r = await run(stock, ours, "client", ["-t", "2", "--fq-rate", "50m"]);
    expect(r.sockets.map((s) => s.maxPacing)).toEqual([50e6 / 8]);
    expect(receivedBps(r.client)).toBeLessThan(75e6);
  }, T);

  test("-S / --dscp: our client's data socket carries the TOS (IP_TOS over IPv4, IPV6_TCLASS over IPv6)", async () => {
    const v4 = await run(stock, ours, "client", ["-t", "3", "-S", "0x10"]);
    expect(v4.sockets.map((s) => s.tos)).toEqual([0x10]);
    const dscp = await run(stock, ours, "client", ["-t", "3", "--dscp", "CS1"]);
    expect(dscp.sockets.map((s) => s.tos)).toEqual([8 << 2]);
    const v6 = await run(stock, ours, "client", ["-t", "3", "-S", "0x10"], "::1");
    expect(v6.sockets.map((s) => s.tclass)).toEqual([0x10]);
  }, T);

  test("-S -R: our server's sending data socket carries the TOS the stock client asked for", async () => {
    const r = await run(ours, stock, "server", ["-t", "3", "-R", "-S", "0x10"]);
    expect(r.sockets.map((s) => s.tos)).toEqual([0x10]);
  }, T);

  test("-w: our client's data socket gets both SO_SNDBUF and SO_RCVBUF, as stock's (the kernel doubles them)", async () => {
    for (const dir of [[], ["-R"]]) {
      const r = await run(stock, ours, "client", ["-t", "3", "-w", "256K", ...dir]);
      expect(r.sockets.map((s) => [s.sndbuf, s.rcvbuf])).toEqual([[512 * 1024, 512 * 1024]]);
    }
  }, T);

  test("--cntl-ka=20/5/3: our client's control connection has keepalive with that idle time, read back from the kernel", async () => {
    const p = port();
    const srv = stock(["-s", "-p", String(p)]);
    try {
      await waitListening(p);
      const cli = ours(["-c", "127.0.0.1", "-p", String(p), "-t", "3", "--cntl-ka=20/5/3"]);
      await dataSockets(cli.pid, p, 100_000);
      const control = ssSockets(cli.pid, p).filter((s) => s.bytes < 100_000);
      expect(control.length).toBe(1);
      expect(control[0]!.keepaliveS).toBeGreaterThan(10);
      expect(control[0]!.keepaliveS).toBeLessThanOrEqual(20);
      expect((await cli.done).code).toBe(0);
    } finally {
      srv.kill();
      await srv.done;
    }
  }, T);

  test("-M: our server advertises the MSS on its data connections, as stock's (TCP_MAXSEG on its listener), both ways", async () => {
    for (const dir of [[], ["-R"]]) {
      const r = await run(ours, stock, "server", ["-t", "3", "-M", "1000", ...dir]);
      expect(r.sockets.length).toBe(1);
      expect(r.sockets[0]!.advmss).toBeLessThanOrEqual(1000);
    }
  }, T);
});

describe.skipIf(!hasTrixieIperf3())("iperf3 data-socket options against trixie's 3.18", () => {
  test("--fq-rate on TCP: a 3.18 client -R --fq-rate 50m gets ~50 Mbit/s from our server, whose sending socket is paced", async () => {
    const r = await run(ours, trixie, "server", ["-t", "2", "-R", "--fq-rate", "50m"]);
    expect(r.sockets.map((s) => s.maxPacing)).toEqual([50e6 / 8]);
    expect(receivedBps(r.client)).toBeLessThan(75e6);
  }, T);
});
