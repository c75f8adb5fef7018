import { describe, expect, test } from "bun:test";
import { type CsvLine, csv, figures, hasStockIperf, ours, oursMain, reportLines, session, sleep, stock, stockPeer, waitListening } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";
import { iperf2Peers, type StockPeer } from "../support/stock-peers.ts";
import { pollStatus } from "../../src/status/poll.ts";
import type { StatusDocument } from "../../src/status/schema.ts";

/**
 * anyperf iperf against Debian's iperf 2.1.8, both ways, on 127.0.0.1 ports 27100-27299. Each test starts a server,
 * runs one client to completion (bounded), kills the server by pid, and checks that both sides printed the same
 * figures: exact byte counts through -y C where both sides count the same bytes, the printed lines otherwise. The
 * key pairings (TCP and UDP, both roles) also run against Debian trixie's iperf 2.2.1 (PEERS), on ports picked free.
 */

if (!hasStockIperf()) throw new Error("stock iperf 2 is not installed: run scripts/install-peers (Debian package 'iperf')");

const L = "127.0.0.1";
const PEERS = iperf2Peers();
/** A server port and the one after it (for -L), free now. */
const ports = (): [number, number] => {
  const p = freePorts(27200, 27300, 2);
  return [p, p + 1];
};

/**
 * Our server's report line as a stock client prints it when relayed: iperf 2.2's client prints a report without the
 * extended fields (a server without -e, its own and 2.1.8's too) with jitter 0.000 ms and loss (0%) whatever the
 * report holds (ReportOutputs.c udp_output_read: no IPG count, no jitter).
 */
function relayed(peer: StockPeer, fig: string): string {
  return peer.version?.startsWith("2.1.") ? fig : fig.replace(/\d+\.\d+ ms( +\d+\/\d+ +)\([^)]*%\)/, "0.000 ms$1(0%)");
}
const TCP_BANNER = (port: number) => new RegExp(`Server listening on TCP port ${port}`);
const UDP_BANNER = (port: number) => new RegExp(`Server listening on UDP port ${port}`);

/** "8.60 GBytes  14.5 Gbits/sec" -> bits per second. */
function bitsPerSecond(fig: string): number {
  const m = /([\d.]+) ([KMGT]?)bits\/sec/.exec(fig);
  if (!m) throw new Error(`no bandwidth in "${fig}"`);
  return Number(m[1]) * { "": 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] as "" | "K" | "M" | "G" | "T"];
}

function transfer(fig: string): string {
  return /^([\d.]+ [KMGT]?Bytes)/.exec(fig)?.[1] ?? `no transfer in "${fig}"`;
}

/** Final CSV lines (one per stream: the one reaching furthest), keyed by the unordered pair of ports. */
function finals(lines: CsvLine[]): Map<string, CsvLine> {
  const out = new Map<string, CsvLine>();
  for (const l of lines) {
    if (l.id < 0 || l.start !== 0) continue;
    const key = [l.clientPort, l.serverPort].sort((a, b) => a - b).join("/");
    const seen = out.get(key);
    if (!seen || seen.end <= l.end) out.set(key, l);
  }
  return out;
}

function expectSameBytes(a: string, b: string, streams: number): void {
  const x = finals(csv(a));
  const y = finals(csv(b));
  expect([...x.keys()].sort()).toEqual([...y.keys()].sort());
  expect(x.size).toBe(streams);
  for (const [key, l] of x) {
    expect(l.bytes).toBeGreaterThan(0);
    expect({ key, bytes: y.get(key)!.bytes }).toEqual({ key, bytes: l.bytes });
  }
}

describe("done criteria of issue 6", () => {
  test("the Tencent command (-b 2048M -t 5 -P 8) from stock iperf against anyperf iperf -s", async () => {
    const port = 27100;
    const r = await session(ours(["-s", "-p", String(port)]), TCP_BANNER(port), () => stock(["-c", L, "-p", String(port), "-b", "2048M", "-t", "5", "-P", "8"]), 30_000);
    expect(r.client.code).toBe(0);
    const c = reportLines(r.client.out);
    const s = reportLines(r.server);
    expect(c.filter((x) => x.id !== "SUM").length).toBe(8);
    expect(s.filter((x) => x.id !== "SUM").length).toBe(8);
    const cs = figures(c.find((x) => x.id === "SUM")!.line);
    const ss = figures(s.find((x) => x.id === "SUM")!.line);
    // Both count the same bytes (the server reads everything the client wrote, header included).
    expect(transfer(ss)).toBe(transfer(cs));
    expect(Math.abs(bitsPerSecond(ss) - bitsPerSecond(cs)) / bitsPerSecond(cs)).toBeLessThan(0.05);
  }, 40_000);

});

for (const peer of PEERS) describe.skipIf(!peer.version)(`UDP against stock ${peer.label}`, () => {
  const theirs = stockPeer(peer);
  test("anyperf iperf -c -u -b 100M against stock iperf -s -u: our Server Report line is the server's own line", async () => {
    const [port] = ports();
    const r = await session(theirs(["-s", "-u", "-p", String(port)]), UDP_BANNER(port), () => ours(["-c", L, "-p", String(port), "-u", "-b", "100M", "-t", "3"]), 20_000);
    expect(r.client.code).toBe(0);
    const out = r.client.out.split("\n");
    const report = out[out.findIndex((l) => l.endsWith("Server Report:")) + 2]!;
    const serverLine = reportLines(r.server).at(-1)!.line;
    // Same report, except that the stock server prints its jitter a moment later than the report it sent (stock
    // client and server differ the same way: 0.012 vs 0.013 ms in iperf2-udp.txt).
    const jitter = / +(\d+\.\d{3}) ms /;
    expect(figures(report).replace(jitter, " ")).toBe(figures(serverLine).replace(jitter, " "));
    expect(Math.abs(Number(jitter.exec(report)![1]) - Number(jitter.exec(serverLine)![1]))).toBeLessThan(0.02);
    // 100M = 104857600 bit/s for 3 s: about 26750 datagrams of 1470 bytes.
    const total = Number(/\/(\d+) \(/.exec(serverLine)![1]);
    expect(total).toBeGreaterThan(24000);
    expect(total).toBeLessThan(29000);
  }, 30_000);

  test("stock iperf -c -u -b 100M against anyperf iperf -s -u: the client's Server Report is our line", async () => {
    const [port] = ports();
    const r = await session(ours(["-s", "-u", "-p", String(port)]), UDP_BANNER(port), () => theirs(["-c", L, "-p", String(port), "-u", "-b", "100M", "-t", "3"]), 20_000);
    expect(r.client.code).toBe(0);
    const out = r.client.out.split("\n");
    const report = out[out.findIndex((l) => l.endsWith("Server Report:")) + 2]!;
    expect(figures(report)).toBe(relayed(peer, figures(reportLines(r.server).at(-1)!.line)));
    expect(r.client.out).not.toContain("WARNING");
  }, 30_000);

  test("stock -u -P 2 against anyperf: one report per flow and a sum", async () => {
    const [port] = ports();
    const r = await session(ours(["-s", "-u", "-p", String(port)]), UDP_BANNER(port), () => theirs(["-c", L, "-p", String(port), "-u", "-b", "10M", "-t", "2", "-P", "2"]), 20_000);
    expect(r.client.code).toBe(0);
    const reports = r.client.out.split("\n").filter((l) => / ms \d+\/\d+ \(/.test(l)).map(figures).sort();
    const lines = reportLines(r.server).filter((x) => x.id !== "SUM").map((x) => relayed(peer, figures(x.line))).sort();
    expect(reports).toEqual(lines);
    expect(r.server).toContain("[SUM]");
  }, 30_000);

  test("UDP -R both ways: the receiving client counts what the server says it sent", async () => {
    for (const serverIsOurs of [true, false]) {
      const [port] = ports();
      const srv = serverIsOurs ? ours(["-s", "-u", "-p", String(port)]) : theirs(["-s", "-u", "-p", String(port)]);
      const args = ["-c", L, "-p", String(port), "-u", "-R", "-b", "10M", "-t", "2"];
      const r = await session(srv, UDP_BANNER(port), () => (serverIsOurs ? theirs(args) : ours(args)), 20_000);
      expect(r.client.code).toBe(0);
      const line = reportLines(r.client.out).find((x) => x.id === "*1")!.line;
      const [, lost, total] = / ms (\d+)\/(\d+) \(/.exec(line)!.map(Number);
      // Stock servers print "Sent" as data datagrams + 2 and clients count data + FIN: 91 data gave 93 and 0/92.
      const sent = Number(/Sent (\d+) datagrams/.exec(r.server)![1]);
      expect(total).toBe(sent - 1);
      // 10 Mbit/s (binary) for 2 s is ~1783 datagrams of 1470 bytes; a loaded CI machine gets less, never none.
      expect(total).toBeGreaterThan(100);
      expect(lost!).toBeLessThan(total!);
    }
  }, 40_000);
});

/** The -y C variants a newer peer runs as well: each direction, parallel streams and the dual test. */
const NEWER_TCP = new Set(["plain", "-P 4", "-R", "-d"]);

for (const peer of PEERS) describe.skipIf(!peer.version)(`TCP against stock ${peer.label}, exact byte counts through -y C`, () => {
  const theirs = stockPeer(peer);
  const variants: { name: string; args: (listen: number) => string[]; streams: number }[] = [
    { name: "plain", args: () => [], streams: 1 },
    { name: "-P 4", args: () => ["-P", "4"], streams: 4 },
    { name: "-r", args: (l) => ["-r", "-L", String(l)], streams: 2 },
    { name: "-d", args: (l) => ["-d", "-L", String(l)], streams: 2 },
    { name: "-R", args: () => ["-R"], streams: 1 },
    { name: "-n 2M -l 64K (byte count wins over -t)", args: () => ["-n", "2M", "-l", "64K"], streams: 1 },
    { name: "-w 256K -P 2", args: () => ["-w", "256K", "-P", "2"], streams: 2 },
    { name: "-R -n 1M -l 16K", args: () => ["-R", "-n", "1M", "-l", "16K"], streams: 1 },
  ];
  for (const v of variants.filter((v) => peer.system || NEWER_TCP.has(v.name))) {
    for (const serverIsOurs of [true, false]) {
      test(`${v.name}: ${serverIsOurs ? "stock client, anyperf server" : "anyperf client, stock server"}`, async () => {
        const [p, listen] = ports();
        const srv = serverIsOurs ? ours(["-s", "-p", String(p), "-y", "C"]) : theirs(["-s", "-p", String(p), "-y", "C"]);
        const args = ["-c", L, "-p", String(p), "-t", "1", "-b", "20M", "-y", "C", ...v.args(listen)];
        // CSV servers print no banner: wait for the listening socket instead.
        await waitListening(p, "tcp");
        const r = await session(srv, /.*/, () => (serverIsOurs ? theirs(args) : ours(args)), 20_000);
        expect(r.client.code).toBe(0);
        expectSameBytes(r.client.out, r.server, v.streams);
      }, 30_000);
    }
  }

  test("-e -R: our server's sender columns, the stock client's reads", async () => {
    const [port] = ports();
    const r = await session(ours(["-s", "-p", String(port), "-e"]), TCP_BANNER(port), () => theirs(["-c", L, "-p", String(port), "-t", "1", "-e", "-R", "-b", "20M"]), 20_000);
    expect(r.client.code).toBe(0);
    expect(r.server).toContain("Read buffer size:  128 KByte (Dist bin width=16.0 KByte)");
    // The peer's version, read from its header.
    // A development build ("2.2.n") announces the release it will be ("2.2.2").
    const announced = peer.version!.endsWith(".n") ? "2\\.2\\.\\d+" : peer.version!.replaceAll(".", "\\.");
    expect(r.server).toMatch(new RegExp(`\\(reverse\\) \\(sock=\\d+\\) \\(peer ${announced}\\) \\(icwnd/mss/irtt=\\d+/\\d+/\\d+\\)\n`));
    const ours1 = reportLines(r.server).find((x) => x.id === "1")!.line;
    expect(ours1).toMatch(/ \d+\/0 +\d+ +\d+K\/\d+\(\d+\) us  [\d.]+$/);
    const stock1 = reportLines(r.client.out).find((x) => x.id === "*1")!.line;
    expect(transfer(figures(stock1))).toBe(transfer(figures(ours1)));
  }, 30_000);
});

describe("--full-duplex, -e and many clients", () => {
  /** Final CSV byte counts of one side, sorted: a full-duplex connection prints its sent and its received bytes. */
  const byteCounts = (text: string) => csv(text).map((l) => l.bytes).sort((a, b) => a - b);

  test("--full-duplex both ways: each side received exactly what the other sent (-y C)", async () => {
    for (const [port, serverIsOurs] of [[27132, true], [27133, false]] as const) {
      const srv = serverIsOurs ? ours(["-s", "-p", String(port), "-y", "C"]) : stock(["-s", "-p", String(port), "-y", "C"]);
      const args = ["-c", L, "-p", String(port), "-t", "1", "-b", "10M", "--full-duplex", "-y", "C"];
      await waitListening(port, "tcp");
      const r = await session(srv, /.*/, () => (serverIsOurs ? stock(args) : ours(args)), 20_000);
      expect(r.client.code).toBe(0);
      const [client, server] = [byteCounts(r.client.out), byteCounts(r.server)];
      expect(client).toHaveLength(2);
      expect(server).toEqual(client);
      // 10 Mbit/s (binary) each way for 1 s: about 1.3 MB each, the client's count including its 60-byte header.
      for (const b of client) expect(b).toBeGreaterThan(500_000);
    }
  }, 40_000);

  test("-e: our sender's columns (writes, retries, cwnd/RTT, NetPwr) and the stock receiver agree on the bytes", async () => {
    const port = 27134;
    const r = await session(stock(["-s", "-p", String(port), "-e"]), TCP_BANNER(port), () => ours(["-c", L, "-p", String(port), "-t", "2", "-e", "-i", "1", "-b", "20M"]), 20_000);
    expect(r.client.code).toBe(0);
    expect(r.client.out).toContain("TOS set to 0x0 (Nagle on)");
    expect(r.client.out).toMatch(/connected with 127\.0\.0\.1 port 27134 \(sock=\d+\) \(icwnd\/mss\/irtt=\d+\/\d+\/\d+\) \(ct=[\d.]+ ms\) on \d{4}-/);
    const write = /^\[  1\] (\d+\.\d{4})-(\d+\.\d{4}) sec  (.+?)  (\d+)\/0 +(\d+) +(\d+)K\/(\d+)\((\d+)\) us  (\d+(?:\.\d+)?)$/;
    const lines = r.client.out.split("\n").filter((l) => write.test(l));
    expect(lines.length).toBe(3);
    for (const l of lines) {
      const m = write.exec(l)!;
      expect(Number(m[4])).toBeGreaterThan(0); // writes
      expect(Number(m[6])).toBeGreaterThan(0); // cwnd
      expect(Number(m[7])).toBeGreaterThan(0); // RTT
      // NetPwr = bytes/s over RTT (s) / 10^6, from the printed figures (rounded, so within a few percent).
      const seconds = Number(m[2]) - Number(m[1]);
      const bytes = /^([\d.]+) ([KMG]?)Bytes/.exec(m[3]!)!;
      const b = Number(bytes[1]) * { "": 1, K: 1024, M: 2 ** 20, G: 2 ** 30 }[bytes[2] as "" | "K" | "M" | "G"];
      expect(Math.abs(Number(m[9]) - b / seconds / (Number(m[7]) * 1e-6) / 1e6) / Number(m[9])).toBeLessThan(0.05);
    }
    const serverFinal = reportLines(r.server).at(-1)!.line;
    expect(transfer(figures(serverFinal))).toBe(transfer(figures(lines.at(-1)!)));
  }, 30_000);

  test("UDP -e: our sender's Write/Err PPS lines; our total counts the FIN datagram as the stock server does", async () => {
    const port = 27138;
    const r = await session(stock(["-s", "-u", "-p", String(port), "-e"]), UDP_BANNER(port), () => ours(["-c", L, "-p", String(port), "-u", "-t", "1", "-e", "-b", "2M"]), 20_000);
    expect(r.client.code).toBe(0);
    const out = r.client.out.split("\n");
    const heading = out.indexOf("[ ID] Interval            Transfer     Bandwidth      Write/Err  PPS");
    expect(heading).toBeGreaterThan(0);
    const final = /^\[  1\] 0\.0000-[\d.]+ sec  (.+?)  (\d+)\/0 +(\d+) pps$/.exec(out[heading + 1]!)!;
    const sent = Number(/Sent (\d+) datagrams/.exec(r.client.out)![1]);
    expect(Number(final[2])).toBe(sent - 2);
    const [, lost, total] = / (\d+)\/(\d+) \(/.exec(reportLines(r.server).at(-1)!.line)!.map(Number);
    // Data datagrams + FIN, nothing lost at 2 Mbit/s on loopback: the same bytes on both sides.
    expect(total).toBe(sent - 1);
    if (lost === 0) expect(transfer(final[1]!.trim())).toBe(transfer(figures(reportLines(r.server).at(-1)!.line)));
  }, 30_000);

  test("many stock clients at once (TCP, -P 2, -R, UDP) against one anyperf server each: every count agrees", async () => {
    const tcpPort = 27136;
    const udpPort = 27137;
    const tcp = ours(["-s", "-p", String(tcpPort), "-y", "C"]);
    const udp = ours(["-s", "-u", "-p", String(udpPort)]);
    try {
      await Promise.all([waitListening(tcpPort, "tcp"), waitListening(udpPort, "udp")]);
      const base = ["-c", L, "-t", "1", "-b", "10M", "-y", "C"];
      const clients = [
        ...Array.from({ length: 4 }, () => stock([...base, "-p", String(tcpPort)])),
        stock([...base, "-p", String(tcpPort), "-P", "2"]),
        stock([...base, "-p", String(tcpPort), "-R"]),
        stock([...base, "-p", String(tcpPort), "--full-duplex"]),
        ...Array.from({ length: 3 }, () => stock(["-c", L, "-p", String(udpPort), "-u", "-t", "1", "-b", "5M"])),
      ];
      const done = await Promise.all(clients.map((c) => c.done));
      for (const d of done) expect(d.code).toBe(0);
      await sleep(500);
      const theirs = done.slice(0, 7).flatMap((d) => csv(d.out)).map((l) => l.bytes).sort((a, b) => a - b);
      const mine = csv(tcp.text()).map((l) => l.bytes).sort((a, b) => a - b);
      // 4 + 2 + 1 + 2 (full duplex both ways) stream reports on each side.
      expect(theirs).toHaveLength(9);
      expect(mine).toEqual(theirs);
      for (const d of done.slice(7)) {
        expect(d.out).toContain("Server Report:");
        expect(d.out).not.toContain("WARNING");
      }
      expect(reportLines(udp.text()).filter((x) => x.id !== "SUM")).toHaveLength(3);
    } finally {
      tcp.kill();
      udp.kill();
      await Promise.all([tcp.done, udp.done]);
    }
  }, 40_000);
});

describe("a bad peer never takes the server down", () => {
  test("garbage, bad headers, silence and stray datagrams, then a normal stock test", async () => {
    const tcpPort = 27130;
    const udpPort = 27131;
    const tcp = ours(["-s", "-p", String(tcpPort)]);
    const udp = ours(["-s", "-u", "-p", String(udpPort)]);
    try {
      await Promise.all([waitListening(tcpPort, "tcp"), waitListening(udpPort, "udp")]);
      const openings = [
        new Uint8Array(64).fill(0xff), // every flag bit: classic + extended, length 255
        Uint8Array.from([0x40, 0x01, 0x00, 0x10, 1, 2, 3]), // extended header announcing 8 bytes
        Uint8Array.from([0x80, 0x00]), // half a flags word, then close
        new Uint8Array(0), // connect and close
        crypto.getRandomValues(new Uint8Array(300)),
        Uint8Array.from([0xc0, 0x01, 0x00, 0x79, ...new Uint8Array(56)]), // -d asking to connect back to port 0
      ];
      for (const bytes of openings) {
        const s = await Bun.connect({ hostname: L, port: tcpPort, socket: { data() {}, error() {} } });
        if (bytes.length) s.write(bytes);
        await sleep(50);
        s.end();
      }
      const u = await Bun.udpSocket({});
      for (const d of [new Uint8Array(0), new Uint8Array(3), new Uint8Array(15).fill(0xff), crypto.getRandomValues(new Uint8Array(200)), Uint8Array.from([0xff, 0xff, 0xff, 0xfe, ...new Uint8Array(12)])]) {
        u.send(d, udpPort, L);
      }
      await sleep(200);
      u.close();
      const t = stock(["-c", L, "-p", String(tcpPort), "-t", "1", "-b", "10M"]);
      const v = stock(["-c", L, "-p", String(udpPort), "-u", "-t", "1", "-b", "10M"]);
      const [tr, vr] = await Promise.all([t.done, v.done]);
      expect(tr.code).toBe(0);
      expect(vr.code).toBe(0);
      await sleep(400);
      expect(reportLines(tcp.text()).length).toBeGreaterThanOrEqual(1);
      expect(vr.out).toContain("Server Report:");
      expect(vr.out).not.toContain("WARNING");
    } finally {
      tcp.kill();
      udp.kill();
      const [a, b] = await Promise.all([tcp.done, udp.done]);
      // Killed by us (SIGTERM), not crashed before: a crash would have exited with an error code earlier.
      expect(a.out).not.toMatch(/error:|TypeError|RangeError/);
      expect(b.out).not.toMatch(/error:|TypeError|RangeError/);
    }
  }, 30_000);
});

describe("--http live status", () => {
  test("a stock -P 2 client against anyperf iperf -s --http: /status shows the test measuring, /results its bytes", async () => {
    const p = 27300;
    const http = 27301;
    const srv = oursMain(["-s", "-p", String(p), "-y", "C", "--http", `${L}:${http}`]);
    try {
      await waitListening(p, "tcp");
      await waitListening(http, "tcp");
      const docs: StatusDocument[] = [];
      const stop = new AbortController();
      const polling = pollStatus(`http://${L}:${http}/`, { hz: 10, durationMs: 20_000, signal: stop.signal, onDocument: (d) => docs.push(d) });
      const client = await stock(["-c", L, "-p", String(p), "-t", "2", "-P", "2", "-y", "C"]).done;
      await sleep(400);
      stop.abort();
      const report = await polling;
      expect(client.code).toBe(0);
      expect(report.failures + report.invalid).toBe(0);
      const live = docs.filter((d) => d.test?.phase === "measuring");
      expect(live.length).toBeGreaterThan(0);
      expect(live.some((d) => d.test!.mode === "iperf" && d.test!.role === "server" && d.test!.bytes > 0)).toBe(true);
      const res = await fetch(`http://${L}:${http}/results`);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as { mode: string; role: string; transport: string; summary: { bytes: number }; totals: { received_bytes: number }; streams: unknown[] };
      expect([doc.mode, doc.role, doc.transport, doc.streams.length]).toEqual(["iperf", "server", "tcp", 2]);
      expect(doc.summary.bytes).toBeGreaterThan(0);
      // Whole-test totals count the same bytes as our own final lines (the measured window starts with the data).
      const printed = [...finals(csv(srv.text())).values()].reduce((n, l) => n + l.bytes, 0);
      expect(doc.totals.received_bytes).toBe(printed);
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 40_000);
});
