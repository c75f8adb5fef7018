/**
 * Every dialect in both roles on the local hand-off path (src/net/hand-off.ts: the main thread's sockets stay there
 * for its own stream host, as on Windows, macOS and musl), forced on Linux with ANYPERF_LOCAL_HAND_OFF=1, which our
 * child processes inherit. One pairing per role and feature against the stock peers, through the interop harnesses;
 * ports 18100-18299 (picked free at run time; below the kernel's ephemeral range, where other tests' connections
 * held every pair of 38400-38999 at once).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { freePorts, spawnProc, waitFor } from "../support/processes.ts";
import { ntttcpLinux } from "../serve/harness.ts";
import { disagreement, hasStockIperf3, json, ours as ours3, stock as stock3, waitListening as listening3 } from "./iperf3-harness.ts";
import { csv, hasStockIperf, ours as ours2, session, stock as stock2, waitListening as listening2 } from "./iperf2-harness.ts";
import { expectSidesAgree, finish, hasStockNetperf, keyvals, oursNetperf, oursNetserver, stockNetperf, stockNetserver, waitListening as listeningNetperf } from "./netperf-harness.ts";
import { expectClose, expectOk, linuxRate, pair, windowsRate } from "./ntttcp-harness.ts";

process.env.ANYPERF_LOCAL_HAND_OFF = "1";
const L = "127.0.0.1";
const MAIN = join(import.meta.dir, "../../main.ts");
const NTTTCP_CLI = join(import.meta.dir, "ntttcp-cli.ts");
const NTTTCP = ntttcpLinux();
const T = 40_000;
let nextPort = 18100;
/** The next port pair of the range that no socket holds in any state (a TIME_WAIT on a port stops a listener too). */
function port(): number {
  const p = freePorts(nextPort, 18300, 2);
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
  // Without libc the UDP server's streams are views of its one port socket (no SO_REUSEPORT), read on the main thread.
  for (const [name, args] of [["UDP -b 100M", []], ["UDP -b 100M -R", ["-R"]], ["UDP -P 2", ["-P", "2"]]] as const) {
    test(`stock client -> anyperf server: ${name}`, () => run(ours3, stock3, ["-u", "-b", name === "UDP -P 2" ? "50M" : "100M", "-t", "2", ...args], 0.01), T);
  }
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
    // UDP: every datagram the client sent (1470 bytes each) arrived or was counted lost by the server.
    const lost = udp ? (csv(r.server).at(-1)?.udp?.lost ?? 0) * 1470 : 0;
    expect(last(r.server) + lost).toBe(last(r.client.out));
  }
  test("stock client -> anyperf server: TCP", () => run(true, []), T);
  test("stock client -> anyperf server: TCP -R", () => run(true, ["-R"]), T);
  test("stock client -> anyperf server: UDP", () => run(true, [], true), T);
  test("anyperf client -> stock server: TCP", () => run(false, []), T);
  test("anyperf client -> stock server: TCP -R", () => run(false, ["-R"]), T);
  test("anyperf client -> stock server: UDP", () => run(false, [], true), T);
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
  test("anyperf netperf -> stock netserver: TCP_MAERTS", () => run(false, "TCP_MAERTS", []), T);
  test("anyperf netperf -> stock netserver: UDP_STREAM", () => run(false, "UDP_STREAM", ["-m", "1"]), T);
});

describe("ntttcp", () => {
  test("Linux dialect, anyperf both roles, sync TCP on 2 ports", async () => {
    const p = port();
    const words = (s: string) => s.split(" ");
    const { rx, tx } = await pair(words(`-r${L} -P 2 -p ${p} -t 2`), words(`-s${L} -P 2 -n 1 -p ${p} -t 2 -B 1G`));
    expectOk(rx, tx);
    expectClose(linuxRate(rx.stdout), linuxRate(tx.stdout), 0.03);
  }, T);
  test("Windows dialect, anyperf both roles, sync TCP", async () => {
    const p = port();
    const words = (s: string) => s.split(" ");
    // One thread: its token port (data port + 1 here) is the second port port() keeps free.
    const env = { ANYPERF_NTTTCP_TOKEN_OFFSET: "1" };
    const { rx, tx } = await pair(words(`--windows -r -m 1,*,${L} -t 2 -p ${p}`), words(`--windows -s -m 1,*,${L} -t 2 -p ${p}`), { env });
    expectOk(rx, tx);
    expectClose(windowsRate(rx.stdout), windowsRate(tx.stdout), 0.05);
  }, T);
  test.skipIf(!NTTTCP)("stock ntttcp-for-linux sender -> anyperf receiver, and back", async () => {
    for (const ourRole of ["receiver", "sender"] as const) {
      const p = port();
      const rxArgs = ["-r", "-m", `1,*,${L}`, "-p", String(p), "-t", "2"];
      const txArgs = ["-s", "-m", `1,*,${L}`, "-p", String(p), "-t", "2"];
      const rx = ourRole === "receiver" ? spawnProc([process.execPath, NTTTCP_CLI, ...rxArgs], 30_000) : spawnProc([NTTTCP!, ...rxArgs], 30_000);
      await Bun.sleep(1000);
      const tx = await (ourRole === "sender" ? spawnProc([process.execPath, NTTTCP_CLI, ...txArgs], 30_000) : spawnProc([NTTTCP!, ...txArgs], 30_000)).done;
      const r = await rx.done;
      expect({ role: ourRole, rx: r.code, tx: tx.code }).toEqual({ role: ourRole, rx: 0, tx: 0 });
      expectClose(linuxRate(r.stdout), linuxRate(tx.stdout), 0.05);
    }
  }, 2 * T);
});

/** `anyperf serve` on the local path: every dialect's server in one process, each reached by its stock client. */
describe.skipIf(!hasStockIperf3() || !hasStockIperf() || !hasStockNetperf())("serve", () => {
  test("stock iperf3 (TCP, UDP, UDP -R), iperf and netperf against one serve", async () => {
    const [p3, p2, pn, pa] = [port(), port(), port(), port()];
    const serve = spawnProc([process.execPath, MAIN, "serve", "-B", L, "-p", String(pa), "--iperf3", String(p3), "--iperf", String(p2), "--netserver", String(pn), "--ntttcp", "off"], 90_000);
    try {
      await waitFor(() => serve.stdout() + serve.stderr(), new RegExp(`netserver on ${L}:${pn}`), 30_000);
      expect(serve.stderr()).not.toContain(" off:");
      for (const args of [["-t", "2"], ["-u", "-b", "100M", "-t", "2"], ["-u", "-b", "100M", "-t", "2", "-R"]]) {
        const r = await spawnProc(["iperf3", "-c", L, "-p", String(p3), "-J", ...args], 30_000).done;
        const doc = json(r);
        expect(doc.error).toBeUndefined();
        const blk = (doc.start as { test_start: { blksize: number } }).test_start.blksize;
        const got = doc.end.sum_received!.bytes! + (doc.end.sum_received!.lost_packets ?? 0) * blk;
        expect(disagreement(doc.end.sum_sent!.bytes!, got), args.join(" ")).toBeLessThanOrEqual(0.01);
      }
      const iperf = await spawnProc(["iperf", "-c", L, "-p", String(p2), "-t", "1", "-y", "C"], 30_000).done;
      expect(iperf.code).toBe(0);
      expect(csv(iperf.stdout).at(-1)?.bytes ?? 0).toBeGreaterThan(0);
      const np = await finish(stockNetperf(["-H", L, "-p", String(pn), "-l", "1", "-P", "0", "-t", "TCP_STREAM"]), 30_000);
      expect({ code: np.code, err: np.err }).toEqual({ code: 0, err: "" });
    } finally {
      serve.kill("SIGINT");
    }
    expect((await serve.done).code).toBe(130);
  }, 3 * T);
});
