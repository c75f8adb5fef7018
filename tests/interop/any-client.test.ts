/**
 * `anyperf client HOST[:PORT]` against stock iperf3 servers (3.12, trixie's 3.18) and against anyperf serve: what
 * serves the port is found by a probe that leaves the stock server serving; the Results' remote end is the server's
 * own figures, checked against the document the server prints itself (-J); what iperf3 cannot carry is refused.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { iperf2Peers, iperf3Peers } from "../support/stock-peers.ts";
import { freePorts, spawnProc, waitBound, type Proc } from "../support/processes.ts";
import { ntttcpLinux } from "../serve/harness.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const anyClient = (args: string[]) => spawnProc([process.execPath, MAIN, "client", ...args, "--no-history"], 60_000);

const running: Proc[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill();
    await p.done;
  }
});

async function server(cmd: string[], port: number, proto: "tcp" | "udp" = "tcp"): Promise<Proc> {
  const p = spawnProc(cmd, 120_000);
  running.push(p);
  await waitBound(port, proto);
  return p;
}

/** The last complete test document a persistent `iperf3 -s -J` printed (a probe's aborted attempt prints its own). */
function lastServerDoc(stdout: string): { start: { version: string }; end: Record<string, Record<string, number>> } {
  // 3.12 prints warnings between documents: each document runs from a line "{" to a line "}".
  const docs = stdout.split(/^(?=\{$)/m).filter((t) => t.startsWith("{")).map((t) => JSON.parse(t.slice(0, t.lastIndexOf("\n}") + 2)) as { start: { version: string }; end: Record<string, Record<string, number>> });
  const full = docs.filter((d) => d.end && (d.end.sum_received || d.end.sum));
  return full.at(-1)!;
}

async function run(args: string[]): Promise<Results> {
  const f = await anyClient([...args, "--json"]).done;
  if (f.code !== 0) throw new Error(`exit ${f.code}: ${f.stderr}`);
  return Results.parse(JSON.parse(f.stdout));
}

for (const peer of iperf3Peers()) {
  describe.skipIf(peer.version === undefined)(`anyperf client against ${peer.label}`, () => {
    const start = async () => {
      const port = freePorts(25000, 26000, 1);
      const s = await server([peer.command, "-s", "-J", "-p", String(port)], port);
      return { port, s };
    };

    test("found without --peer; TCP: the server's bytes and CPU are remote, as its own -J reports them", async () => {
      const { port, s } = await start();
      const r = await run([`127.0.0.1:${port}`, "-t", "2", "-P", "2"]);
      expect(r.mode).toBe("client");
      expect(r.remote?.peer).toEqual({ name: "iperf3", version: peer.version });
      expect(r.remote?.version).toBeUndefined();
      s.kill("SIGTERM");
      await s.done;
      const doc = lastServerDoc(s.stdout());
      expect(r.remote!.streams.filter((x) => x.side === "recv")).toHaveLength(2);
      expect(r.remote!.summary!.bytes).toBe(doc.end.sum_received!.bytes!);
      // Our senders' window and the server's receivers' cover the same bytes, give or take what was in flight at a cut.
      expect(Math.abs(r.sender!.bytes - r.remote!.summary!.bytes) / r.remote!.summary!.bytes).toBeLessThan(0.02);
      // The server reads its CPU for the exchange a moment before its own report reads it again.
      expect(Math.abs(r.remote!.cpu.process_percent! - doc.end.cpu_utilization_percent!.host_total!)).toBeLessThan(1);
      // iperf3 exchanges no host CPU modes: absent, not zero.
      expect(r.remote!.cpu.busy_percent).toBeUndefined();
      expect(r.diagnosis?.verdict).toBeDefined();
    });

    test("-R -P 2: the server's sent bytes and retransmits are remote", async () => {
      const { port, s } = await start();
      const r = await run(["127.0.0.1", "-p", String(port), "--peer", "iperf3", "-t", "2", "-R", "-P", "2"]);
      s.kill("SIGTERM");
      await s.done;
      const doc = lastServerDoc(s.stdout());
      expect(r.remote!.streams.map((x) => x.side)).toEqual(["send", "send"]);
      // What the server counted sent is what reached us; its printed sum (3.18) may leave out its last blocks.
      expect(r.totals.received_bytes).toBe(r.remote!.summary!.bytes);
      expect(Math.abs(r.remote!.summary!.bytes - doc.end.sum_sent!.bytes!) / doc.end.sum_sent!.bytes!).toBeLessThan(0.005);
      expect(r.remote!.retransmits).toBe(doc.end.sum_sent!.retransmits!);
    });

    test("-u: the server's received datagrams, loss and jitter are remote", async () => {
      const { port, s } = await start();
      const r = await run([`127.0.0.1:${port}`, "-t", "2", "-u", "-b", "20M", "-l", "1200"]);
      s.kill("SIGTERM");
      await s.done;
      const doc = lastServerDoc(s.stdout());
      expect(r.transport).toBe("udp");
      expect(r.remote!.summary!.packets).toBe(doc.end.sum!.packets!);
      expect(r.remote!.summary!.lost).toBe(doc.end.sum!.lost_packets!);
      expect(Math.abs(r.remote!.summary!.jitter_ms! - doc.end.sum!.jitter_ms!)).toBeLessThan(0.001 * doc.end.sum!.jitter_ms! + 1e-5);
      expect(r.remote!.summary!.packets).toBeGreaterThan(2000);
    });

    test("the probe leaves the server serving: a stock client's test right after it succeeds", async () => {
      const { port } = await start();
      const refused = await anyClient([`127.0.0.1:${port}`, "--rr", "1,1"]).done;
      // --rr is refused only after the probe named the peer: the probe has connected and left.
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toContain("iperf3 server");
      const f = await spawnProc([peer.command, "-c", "127.0.0.1", "-p", String(port), "-t", "1", "-J"], 30_000).done;
      expect(f.code).toBe(0);
      expect((JSON.parse(f.stdout) as { end: { sum_received: { bytes: number } } }).end.sum_received.bytes).toBeGreaterThan(0);
    });
  });
}

describe("anyperf client: refusals and anyperf serve", () => {
  test("--token, --cooldown and what a peer cannot carry are refused in one line naming the peer", async () => {
    const port = freePorts(25000, 26000, 1);
    await server(["iperf3", "-s", "-p", String(port)], port);
    for (const [args, words] of [
      [["--token", "x"], "--token cannot be run against an iperf3 server"],
      [["--cooldown", "1"], "--cooldown cannot be run against an iperf3 server"],
      [["--peer", "ntttcp", "-R"], "-R cannot be run against an ntttcp server"],
      [["--peer", "iperf", "--bidir"], "--bidir cannot be run against an iperf server"],
      [["--peer", "iperf", "--rr", "1,1"], "--rr cannot be run against an iperf server"],
      [["--peer", "iperf", "--warmup", "1"], "--warmup cannot be run against an iperf server"],
    ] as const) {
      const f = await anyClient([`127.0.0.1:${port}`, ...args]).done;
      expect(f.code).toBe(2);
      expect(f.stderr.trim().split("\n")).toHaveLength(1);
      expect(f.stderr).toContain(words);
    }
  });

  test("nothing listens: the native client's one line", async () => {
    const port = freePorts(25000, 26000, 1);
    const f = await anyClient([`127.0.0.1:${port}`]).done;
    expect(f.code).toBe(1);
    expect(f.stderr.trim().split("\n")).toHaveLength(1);
    expect(f.stderr).toContain(`connection to 127.0.0.1:${port} refused`);
  });

  test("anyperf serve is found without --peer and keeps its own remote (version, no peer)", async () => {
    const native = freePorts(31000, 32000, 1);
    const ip3 = freePorts(31000, 32000, 1);
    const ip2 = freePorts(31000, 32000, 1);
    const ns = freePorts(31000, 32000, 1);
    await server([process.execPath, MAIN, "serve", "-p", String(native), "--iperf3", String(ip3), "--iperf", String(ip2), "--netserver", String(ns), "--ntttcp", "off"], native);
    await waitBound(ip3);
    const r = await run([`127.0.0.1:${native}`, "-t", "1"]);
    expect(r.remote?.version).toBeDefined();
    expect(r.remote?.peer).toBeUndefined();
    expect(r.remote!.cpu.busy_percent).toBeGreaterThan(0);
    // Its iperf3 port is an iperf3 server like any other.
    const i = await run([`127.0.0.1:${ip3}`, "-t", "1"]);
    expect(i.remote?.peer?.name).toBe("iperf3");
    expect(i.remote!.summary!.bytes).toBeGreaterThan(0);
  });
});

describe.skipIf(Bun.which("netserver") === null)("anyperf client --peer netperf against netserver 2.7.0", () => {
  const start = async () => {
    const port = freePorts(26000, 27000, 1);
    await server(["netserver", "-D", "-p", String(port)], port);
    return port;
  };

  test("TCP_STREAM: the netserver received every byte this end sent; its host CPU and socket sizes are remote", async () => {
    const port = await start();
    const r = await run([`127.0.0.1:${port}`, "--peer", "netperf", "-t", "2", "-w", "256K"]);
    expect(r.remote?.peer).toEqual({ name: "netperf" });
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
    expect(r.remote!.streams.map((s) => s.side)).toEqual(["recv"]);
    expect(r.remote!.cpu.busy_percent).toBeGreaterThan(0);
    // netserver does not report its process's CPU: absent, not zero.
    expect(r.remote!.cpu.process_percent).toBeUndefined();
    expect(r.remote!.socket_buffers).toEqual({ requested_bytes: 256 * 1024, send_bytes: 512 * 1024, receive_bytes: 512 * 1024 });
  });

  test("found without --peer: a netserver answers the hello padded to one request with its error 998", async () => {
    const port = await start();
    const r = await run([`127.0.0.1:${port}`, "-t", "1"]);
    expect(r.remote?.peer).toEqual({ name: "netperf" });
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
  });

  test("-R is TCP_MAERTS: the netserver sends, its retransmits are remote", async () => {
    const port = await start();
    const r = await run([`127.0.0.1:${port}`, "--peer", "netperf", "-t", "2", "-R"]);
    expect(r.remote!.streams.map((s) => s.side)).toEqual(["send"]);
    expect(r.remote!.totals.sent_bytes).toBeGreaterThan(1e6);
    // The netserver counts what it sent when its timer fires; what was in flight then still arrives.
    expect(Math.abs(r.totals.received_bytes! - r.remote!.totals.sent_bytes!) / r.remote!.totals.sent_bytes!).toBeLessThan(0.01);
    expect(r.remote!.retransmits).toBeGreaterThanOrEqual(0);
  });

  test("--rr and --crr are TCP_RR and TCP_CRR: the netserver answered the transactions this end completed", async () => {
    const port = await start();
    for (const flag of [["--rr", "1,1"], ["--crr"]]) {
      const r = await run([`127.0.0.1:${port}`, "--peer", "netperf", "-t", "2", ...flag]);
      expect(r.test).toBe(flag[0] === "--rr" ? "rr" : "crr");
      expect(r.remote!.streams.map((s) => s.side)).toEqual(["server"]);
      expect(r.remote!.totals.transactions).toBeGreaterThan(100);
      expect(Math.abs(r.remote!.totals.transactions! - r.totals.transactions!)).toBeLessThanOrEqual(1);
    }
  });

  test("what one netperf test cannot carry is refused in one line naming netperf", async () => {
    const port = await start();
    for (const [args, words] of [
      [["-P", "2"], "-P 2 cannot be run against a netperf server"],
      [["--bidir"], "--bidir cannot be run against a netperf server"],
      [["-u", "-R"], "-R -u cannot be run against a netperf server"],
    ] as const) {
      const f = await anyClient([`127.0.0.1:${port}`, "--peer", "netperf", ...args]).done;
      expect(f.code).toBe(2);
      expect(f.stderr.trim().split("\n")).toHaveLength(1);
      expect(f.stderr).toContain(words);
    }
  });
});

/** The per-stream lines of an iperf 2 server's -y C report (its [SUM] line, id < 0, left out): id, bytes, and the rest. */
function serverCsv(stdout: string): string[][] {
  return stdout.split("\n").filter((l) => /^\d{14},/.test(l)).map((l) => l.split(",")).filter((f) => Number(f[5]) > 0);
}

for (const peer of iperf2Peers()) {
  describe.skipIf(peer.version === undefined)(`anyperf client against ${peer.label}`, () => {
    test("found without --peer, its version from its ack; TCP -P 2: every byte we sent (and our headers) is what it counted", async () => {
      const port = freePorts(27000, 28000, 1);
      const s = await server([peer.command, "-s", "-y", "C", "-p", String(port)], port);
      const r = await run([`127.0.0.1:${port}`, "-t", "2", "-P", "2"]);
      s.kill("SIGTERM");
      await s.done;
      // A development build prints "2.2.n" and its ack carries the release it will be ("2.2.2").
      expect(r.remote?.peer).toEqual({ name: "iperf", version: peer.version!.endsWith(".n") ? expect.stringMatching(/^2\.2\.\d+$/) : peer.version });
      // An iperf 2 TCP server reports nothing of its end: absent, not zero; our senders are the summary.
      expect(r.remote!.summary).toBeUndefined();
      expect(r.remote!.streams).toEqual([]);
      expect(r.remote!.cpu).toEqual({});
      expect(r.sender).toEqual(r.summary);
      // The probe's own 60-byte "test" is in the server's log too: the two largest are ours.
      const counted = serverCsv(s.stdout()).map((f) => Number(f[7])).sort((a, b) => b - a).slice(0, 2);
      expect(counted.reduce((a, b) => a + b, 0)).toBe(r.totals.sent_bytes! + 2 * 60);
      expect(r.diagnosis?.verdict).toBeDefined();
    });

    test("-R -P 2: the server's streams are ours to count; it reports none of its own", async () => {
      const port = freePorts(27000, 28000, 1);
      await server([peer.command, "-s", "-p", String(port)], port);
      const r = await run(["127.0.0.1", "-p", String(port), "--peer", "iperf", "-t", "2", "-R", "-P", "2"]);
      expect(r.streams.map((x) => x.side)).toEqual(["recv", "recv"]);
      expect(r.totals.received_bytes).toBeGreaterThan(1e6);
      // Named by --peer: no probe asked its version.
      expect(r.remote?.peer).toEqual({ name: "iperf" });
      expect(r.remote!.summary).toBeUndefined();
    });

    test("-R, one stream: the server writes iperf 2's own 128 KiB, not our 1 MiB default (it segfaults writing over 256 KiB), and serves on; -l 1M -R is refused", async () => {
      const port = freePorts(27000, 28000, 1);
      await server([peer.command, "-s", "-p", String(port)], port);
      // The second run finds it serving: a crashed server would refuse it.
      for (let i = 0; i < 2; i++) {
        const r = await run(["127.0.0.1", "-p", String(port), "--peer", "iperf", "-t", "1", "-R"]);
        expect(r.totals.received_bytes).toBeGreaterThan(1e6);
      }
      const no = await anyClient(["127.0.0.1", "-p", String(port), "--peer", "iperf", "-t", "1", "-R", "-l", "1M"]).done;
      expect(no.code).toBe(2);
      expect(no.stderr.trim()).toBe("anyperf: -l 1048576 with -R cannot be run against an iperf server: a stock iperf 2 server (2.1.8, 2.2.1) crashes writing more than 262144 bytes at once; pass -l 256K or less");
    });

    test("-u -b -P 2: each stream's server report is remote, as the server printed it", async () => {
      const port = freePorts(27000, 28000, 1);
      const s = await server([peer.command, "-s", "-u", "-y", "C", "-p", String(port)], port, "udp");
      const r = await run([`127.0.0.1:${port}`, "--peer", "iperf", "-t", "2", "-u", "-b", "10M", "-l", "1200", "-P", "2"]);
      s.kill("SIGTERM");
      await s.done;
      expect(r.transport).toBe("udp");
      expect(r.target_bps).toBe(20e6);
      const printed = serverCsv(s.stdout()).map((f) => [Number(f[7]), Number(f[10]), Number(f[11])]).sort((a, b) => a[0]! - b[0]!);
      const remote = r.remote!.streams.map((x) => [x.bytes, x.lost!, x.packets!]).sort((a, b) => a[0]! - b[0]!);
      expect(remote).toEqual(printed);
      expect(r.remote!.summary!.bytes).toBe(printed.reduce((a, f) => a + f[0]!, 0));
      expect(r.remote!.summary!.jitter_ms).toBeGreaterThan(0);
      // The receiver reports: its figures are the summary, ours the sender's.
      expect(r.summary.bytes).toBe(r.remote!.summary!.bytes);
      expect(r.sender!.packets).toBeGreaterThan(3000);
    });
  });
}

describe("anyperf client --peer iperf against anyperf's iperf 2 server", () => {
  test("TCP and UDP run through it; UDP's report is remote", async () => {
    const port = freePorts(27000, 28000, 1);
    await server([process.execPath, MAIN, "iperf", "-s", "-p", String(port)], port);
    const t = await run([`127.0.0.1:${port}`, "--peer", "iperf", "-t", "1"]);
    expect(t.remote?.peer).toEqual({ name: "iperf" });
    expect(t.sender!.bytes).toBeGreaterThan(1e6);
    const uport = freePorts(27000, 28000, 1);
    await server([process.execPath, MAIN, "iperf", "-s", "-u", "-p", String(uport)], uport, "udp");
    const u = await run([`127.0.0.1:${uport}`, "--peer", "iperf", "-t", "1", "-u", "-b", "5M"]);
    expect(u.remote!.summary!.packets).toBeGreaterThan(300);
    expect(u.remote!.summary!.lost).toBe(0);
  });
});

/** "total bytes\t:N" of an ntttcp receiver's results block (ntttcp-for-linux's and ours alike). */
const receivedBytes = (stdout: string): number => Number(/total bytes\s*:(\d+)/.exec(stdout)?.[1]);

const NTTTCP_REAL = ntttcpLinux();
for (const [label, command] of [
  ["ntttcp-for-linux 1.4.3", NTTTCP_REAL ? [NTTTCP_REAL] : undefined],
  ["anyperf ntttcp", [process.execPath, MAIN, "ntttcp"]],
] as const) {
  describe.skipIf(command === undefined)(`anyperf client --peer ntttcp against the ${label} receiver`, () => {
    const receive = async (args: string) => {
      const port = freePorts(28600, 28690, 2) + 1;
      const rx = spawnProc([...command!, ...`-r127.0.0.1 -P 1 -p ${port} -t 2 ${args}`.split(/\s+/).filter(Boolean)], 60_000);
      running.push(rx);
      await waitBound(port - 1, "tcp", 15_000);
      return { port, rx };
    };

    test("TCP -P 2 through its sync handshake: the receiver counted what our senders sent; it reports nothing back", async () => {
      const { port, rx } = await receive("");
      const r = await run([`127.0.0.1:${port}`, "--peer", "ntttcp", "-t", "2", "-P", "2"]);
      const done = await rx.done;
      expect(done.code).toBe(0);
      expect(r.remote?.peer).toEqual({ name: "ntttcp" });
      expect(r.remote!.summary).toBeUndefined();
      expect(r.streams.map((x) => x.side)).toEqual(["send", "send"]);
      // Each end times its own 2 s from the sync 'R' (the receiver as it answers, we as it arrives): a loaded host
      // shifts the two windows by up to a few hundred ms, seen 2-8 % apart.
      expect(Math.abs(receivedBytes(done.stdout) - r.sender!.bytes) / r.sender!.bytes).toBeLessThan(0.15);
      expect(r.diagnosis?.verdict).toBeDefined();
    });

    test("-u -b: datagrams at the pace asked (-B), as many as the receiver counted", async () => {
      const { port, rx } = await receive("-u");
      const r = await run([`127.0.0.1:${port}`, "--peer", "ntttcp", "-t", "2", "-u", "-b", "20M", "-l", "1400"]);
      const done = await rx.done;
      expect(r.transport).toBe("udp");
      expect(r.sender!.throughput_bps).toBeGreaterThan(0.9 * 20e6);
      expect(Math.abs(receivedBytes(done.stdout) - r.sender!.bytes) / r.sender!.bytes).toBeLessThan(0.15);
    });
  });
}
