/**
 * Every dialect in both roles on the local hand-off path (src/net/hand-off.ts: the main thread's sockets stay there
 * for its own stream host, as on Windows, macOS and musl), forced on Linux with ANYPERF_LOCAL_HAND_OFF=1, which our
 * child processes inherit. One pairing per role and feature against the stock peers, through the interop harnesses;
 * ports 38400-38499.
 */
import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { disagreement, hasStockIperf3, json, ours as ours3, stock as stock3, waitListening as listening3 } from "./iperf3-harness.ts";
import { csv, hasStockIperf, ours as ours2, session, stock as stock2, waitListening as listening2 } from "./iperf2-harness.ts";
import { expectSidesAgree, finish, hasStockNetperf, keyvals, oursNetperf, oursNetserver, stockNetperf, stockNetserver, waitListening as listeningNetperf } from "./netperf-harness.ts";
import { expectClose, expectOk, linuxRate, pair } from "./ntttcp-harness.ts";

process.env.ANYPERF_LOCAL_HAND_OFF = "1";
const L = "127.0.0.1";
const T = 40_000;
let nextPort = 38400;
/**
 * The next port of the range that no socket holds in any state: the range lies in the kernel's ephemeral ports,
 * which other processes' connections take too, and a TIME_WAIT on a port stops a listener from binding it.
 */
function port(): number {
  const p = freePorts(nextPort, 39000, 2);
  nextPort = p + 2;
  return p;
}

describe.skipIf(!hasStockIperf3())("iperf3", () => {
  /** A one-off server and a -J client; the client's sent and received totals (one from each side) agree. */
  async function run(server: typeof ours3, client: typeof ours3, args: string[], tolerance = 0.001) {
    const p = port();
    const srv = server(["-s", "-1", "-p", String(p)]);
    try {
      // The first server of a run may take a while to load its Workers on a loaded machine.
      await listening3(p, 20_000);
      const cl = await client(["-c", L, "-p", String(p), "-J", ...args]).done;
      const doc = json(cl);
      expect(doc.error).toBeUndefined();
      expect(cl.code).toBe(0);
      expect((await srv.done).code).toBe(0);
      const sent = doc.end.sum_sent!.bytes!;
      const lost = (doc.end.sum_received!.lost_packets ?? 0) * ((doc.start as { test_start: { blksize: number } }).test_start.blksize);
      expect(sent).toBeGreaterThan(0);
      expect(disagreement(sent, doc.end.sum_received!.bytes! + lost)).toBeLessThanOrEqual(tolerance);
    } finally {
      srv.kill();
    }
  }

  for (const [name, args] of [["TCP", []], ["TCP -R", ["-R"]], ["TCP -P 2", ["-P", "2"]]] as const) {
    // Our sender runs on the main thread and takes TEST_END between its writes: more is in flight at the end than a
    // Worker leaves, 2 % at most on a loaded host (0.1 % with Workers).
    test(`stock client -> anyperf server: ${name}`, () => run(ours3, stock3, ["-t", "3", "-b", "400M", ...args], name === "TCP -R" ? 0.02 : 0.001), T);
  }
  test("stock client -> anyperf server: UDP is refused in one line naming the build that has it", async () => {
    const p = port();
    const srv = ours3(["-s", "-1", "-p", String(p)]);
    try {
      await listening3(p, 20_000);
      const cl = await stock3(["-c", L, "-p", String(p), "-u", "-t", "1"]).done;
      // No test ran. (How the stock client ends varies: usually exit 1 and the server's error, sometimes just
      // the closed control connection; the server's own line is the one we own.)
      expect(cl.stdout + cl.stderr).not.toMatch(/receiver|Datagrams/);
      const s = await srv.done;
      expect(s.stdout + s.stderr).toContain("unable to start stream listener: Protocol not supported (UDP tests need the Linux (glibc) build");
    } finally {
      srv.kill();
    }
  }, T);
  test("anyperf client -> stock server: TCP", () => run(stock3, ours3, ["-t", "3", "-b", "400M"]), T);
  test("anyperf client -> stock server: TCP -P 2", () => run(stock3, ours3, ["-t", "3", "-b", "200M", "-P", "2"]), T);
  // The main thread reads the stream between control events, so at TEST_END more is still in flight than a Worker
  // leaves (a few 128 KiB blocks on a loaded host): 1 % instead of 0.1 %.
  test("anyperf client -> stock server: TCP -R", () => run(stock3, ours3, ["-t", "3", "-b", "400M", "-R"], 0.01), T);
  test("anyperf client -> stock server: UDP", () => run(stock3, ours3, ["-u", "-b", "50M", "-l", "8192", "-t", "3"], 0.01), T);
});

describe.skipIf(!hasStockIperf())("iperf 2", () => {
  /** -y C on both sides: the final line of each stream names the same byte count on both. */
  async function run(serverIsOurs: boolean, args: string[], udp = false) {
    const p = port();
    const u = udp ? ["-u"] : [];
    const srv = (serverIsOurs ? ours2 : stock2)(["-s", "-p", String(p), "-y", "C", ...u]);
    await listening2(p, udp ? "udp" : "tcp");
    const clientArgs = ["-c", L, "-p", String(p), "-t", "1", "-b", "20M", "-y", "C", ...u, ...args];
    const r = await session(srv, /.*/, () => (serverIsOurs ? stock2 : ours2)(clientArgs), 20_000);
    expect(r.client.code).toBe(0);
    const last = (text: string) => csv(text).at(-1)?.bytes ?? 0;
    expect(last(r.client.out)).toBeGreaterThan(0);
    expect(last(r.server)).toBe(last(r.client.out));
  }
  test("stock client -> anyperf server: TCP", () => run(true, []), T);
  test("stock client -> anyperf server: TCP -R", () => run(true, ["-R"]), T);
  test("stock client -> anyperf server: UDP", () => run(true, [], true), T);
  test("anyperf client -> stock server: TCP", () => run(false, []), T);
  test("anyperf client -> stock server: TCP -R", () => run(false, ["-R"]), T);
});

describe.skipIf(!hasStockNetperf())("netperf", () => {
  const SELECT = "ELAPSED_TIME,THROUGHPUT,TRANSACTION_RATE,LOCAL_BYTES_SENT,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT,REMOTE_BYTES_RECVD,LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,REMOTE_SEND_CALLS,P99_LATENCY,LOCAL_SEND_SIZE,REMOTE_SEND_SIZE,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS";
  async function run(serverIsOurs: boolean, name: string, opts: string[]) {
    const p = port();
    const first = port();
    const data = [first, first + 1];
    const srv = serverIsOurs ? oursNetserver(["-D", "-p", String(p)]) : stockNetserver(["-D", "-p", String(p)]);
    try {
      await listeningNetperf(p);
      const args = ["-H", L, "-p", String(p), "-l", "2", "-P", "0", "-t", name, "--", ...opts, "-P", data.join(","), "-k", SELECT];
      const r = await finish((serverIsOurs ? stockNetperf : oursNetperf)(args), 25_000);
      expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
      expectSidesAgree(name, keyvals(r.out), serverIsOurs ? "REMOTE" : "LOCAL");
    } finally {
      srv.kill();
    }
  }
  for (const [name, opts] of [["TCP_STREAM", []], ["TCP_MAERTS", []], ["TCP_RR", ["-r", "1,1"]], ["UDP_STREAM", ["-m", "1"]]] as const) {
    test(`stock netperf -> anyperf netserver: ${name}`, () => run(true, name, [...opts]), T);
  }
  test("anyperf netperf -> stock netserver: TCP_STREAM", () => run(false, "TCP_STREAM", []), T);
  test("anyperf netperf -> stock netserver: TCP_RR", () => run(false, "TCP_RR", ["-r", "1,1"]), T);
});

describe("ntttcp", () => {
  test("Linux dialect, anyperf both roles, sync TCP on 2 ports", async () => {
    const p = port();
    const words = (s: string) => s.split(" ");
    const { rx, tx } = await pair(words(`-r${L} -P 2 -p ${p} -t 2`), words(`-s${L} -P 2 -n 1 -p ${p} -t 2 -B 1G`));
    expectOk(rx, tx);
    expectClose(linuxRate(rx.stdout), linuxRate(tx.stdout), 0.03);
  }, T);
});
