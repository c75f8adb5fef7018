import { describe, expect, test } from "bun:test";
import { PolledPlane, type PolledCounters } from "../../src/engine/polled-plane.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import { iperf2Test } from "./iperf2-test.ts";
import { ReportGroup, type Member } from "./groups.ts";
import { Printer } from "./printer.ts";
import { HEADER_BW, HEADER_UDP } from "./text-report.ts";

function capture(csv = false) {
  const lines: string[] = [];
  return { lines, printer: new Printer((t) => lines.push(...t.split("\n").filter(Boolean)), csv) };
}

describe("heading rule of the stock reports", () => {
  test("printed again after connection lines or when it changes (udp_P client: one heading for two Server Reports)", () => {
    const { lines, printer } = capture();
    printer.info("[  1] local ...");
    printer.report(HEADER_BW, "a");
    printer.report(null, "[  1] Sent 896 datagrams");
    printer.report(HEADER_BW, "b");
    printer.report(null, "[  1] Server Report:");
    printer.report(HEADER_UDP, "c");
    printer.report(null, "[  2] Server Report:");
    printer.report(HEADER_UDP, "d");
    printer.info("[ *2] local ... (reverse)");
    printer.report(HEADER_UDP, "e");
    expect(lines).toEqual([
      "[  1] local ...", HEADER_BW, "a", "[  1] Sent 896 datagrams", "b", "[  1] Server Report:", HEADER_UDP, "c", "[  2] Server Report:", "d",
      "[ *2] local ... (reverse)", HEADER_UDP, "e",
    ]);
  });

  test("-y C prints only CSV lines", () => {
    const { lines, printer } = capture(true);
    printer.info("banner");
    printer.report(HEADER_BW, "text");
    printer.csvLine("1,2,3");
    expect(lines).toEqual(["1,2,3"]);
  });
});

describe("report groups", () => {
  // A stream counted by its owner (a PolledPlane): the group reads it through its Test's windows.
  const planeOf = (counters: PolledCounters) => new PolledPlane([StreamSpec.parse({ kind: "tcp-recv", id: 0, listen: { host: "s", port: 5001 } })], () => counters);
  const member = (id: number, bytes: number, startMs: number): Member => ({
    id: String(id), numericId: id, stream: { plane: planeOf({ bytes, packets: 1 }), index: 0 }, transport: "tcp", startMs, client: { host: "c", port: id }, server: { host: "s", port: 5001 }, role: "recv",
  });
  const testOf = (expected: number) => iperf2Test({ role: "server", peer: { host: "c", port: 1 }, transport: "tcp", durationS: 0, intervalS: 0 }, expected);
  const options = { format: "a" as const, enhanced: false, csv: false, intervalS: 0 };
  const join = (g: ReportGroup, m: Member) => {
    g.attach(m.stream.plane, m.role, m.startMs);
    g.add(m, true);
  };

  test("each stream's line when it ends, the sum once all announced streams have ended", () => {
    const { lines, printer } = capture();
    const g = new ReportGroup("h", 2, printer, { ...options, test: testOf(2) });
    const a = member(1, 1441852, 0);
    const b = member(2, 1441852, 0);
    join(g, a);
    g.ended(a, 1000.6);
    expect(lines).toEqual([HEADER_BW, "[  1] 0.0000-1.0006 sec  1.38 MBytes  11.5 Mbits/sec"]);
    expect(g.accepting).toBe(true);
    join(g, b);
    g.ended(b, 999.3);
    expect(lines.slice(2)).toEqual(["[  2] 0.0000-0.9993 sec  1.38 MBytes  11.5 Mbits/sec", "[SUM] 0.0000-1.0006 sec  2.75 MBytes  23.1 Mbits/sec"]);
    expect(g.accepting).toBe(false);
  });

  test("streams announced but never coming: the sum after a grace period, and the group takes no later client", async () => {
    const { lines, printer } = capture();
    const g = new ReportGroup("h", 3, printer, { ...options, lateStreamMs: 20, test: testOf(3) });
    const [a, b] = [member(1, 1000, 0), member(2, 1000, 0)];
    join(g, a);
    join(g, b);
    g.ended(a, 1000);
    g.ended(b, 1000);
    expect(lines.some((l) => l.startsWith("[SUM]"))).toBe(false);
    expect(g.accepting).toBe(true);
    await Bun.sleep(60);
    expect(lines.at(-1)).toBe("[SUM] 0.0000-1.0000 sec  1.95 KBytes  16.0 Kbits/sec");
    expect(g.accepting).toBe(false);
  });

  test("a single stream prints no sum; CSV finals of a server carry the epoch-zero stamp without -i", () => {
    const { lines, printer } = capture(true);
    const g = new ReportGroup("h", 1, printer, { ...options, csv: true, test: testOf(1) });
    const a = member(1, 1441852, 0);
    join(g, a);
    g.ended(a, 1000);
    expect(lines).toEqual(["19700101000000,c,1,s,5001,1,0.0-1.0,1441852,11534816"]);
  });

  test("UDP senders: each final line with its FIN's bytes and \"Sent\", then the sum and its \"Sent\" (stock udp -P 2)", () => {
    const { lines, printer } = capture();
    const g = new ReportGroup("h", 2, printer, { ...options, test: testOf(2) });
    const fin = { bytes: 1470, datagrams: 0 };
    const udp = (id: number): Member => ({
      id: String(id), numericId: id, stream: { plane: planeOf({ bytes: 181 * 1470, packets: 181 }), index: 0 }, transport: "udp", role: "send", fin, startMs: 0,
      client: { host: "c", port: id }, server: { host: "s", port: 5001 },
    });
    const [a, b] = [udp(2), udp(1)];
    join(g, a);
    join(g, b);
    g.ended(a, 2018.9);
    g.ended(b, 2018.9);
    expect(lines).toEqual([
      HEADER_BW,
      "[  2] 0.0000-2.0189 sec   261 KBytes  1.06 Mbits/sec",
      "[  2] Sent 183 datagrams",
      "[  1] 0.0000-2.0189 sec   261 KBytes  1.06 Mbits/sec",
      "[  1] Sent 183 datagrams",
      "[SUM] 0.0000-2.0189 sec   523 KBytes  2.12 Mbits/sec",
      "[SUM-2] Sent 366 datagrams",
    ]);
  });

  test("-i: each interval is the Test's window (the header in the first), the sum beside it, finals since the open", async () => {
    const { lines, printer } = capture();
    const counters = [{ bytes: 0, packets: 0 }, { bytes: 0, packets: 0 }];
    const t = testOf(2);
    const g = new ReportGroup("h", 2, printer, { ...options, format: "B", intervalS: 0.5, test: t });
    const startMs = performance.now();
    const [a, b] = counters.map((c, i): Member => ({
      id: String(i + 1), numericId: i + 1, stream: { plane: planeOf(c), index: 0 }, transport: "tcp", role: "send", headerBytes: 24, startMs,
      client: { host: "c", port: i + 1 }, server: { host: "s", port: 5001 },
    }));
    join(g, a!);
    join(g, b!);
    counters[0]!.bytes = 1000;
    counters[1]!.bytes = 2000;
    // Cut at 0.5 s and 1 s; each step waits for the cut's lines rather than a fixed time, which a loaded host
    // overruns, and the test stops right after the second cut, long before a third is due.
    const cuts = async (n: number) => {
      while (lines.filter((l) => /^\[SUM\]/.test(l)).length < n) await Bun.sleep(10);
    };
    await cuts(1);
    counters[0]!.bytes = 1500;
    counters[1]!.bytes = 2500;
    await cuts(2);
    const end = performance.now();
    g.stopped(end);
    g.ended(a!, end);
    g.ended(b!, end);
    const bytes = lines.filter((l) => /^\[ *[0-9S]/.test(l)).map((l) => /sec +(\d+) Bytes/.exec(l)?.[1] ?? l);
    expect(bytes).toEqual(["1024", "2024", "3048", "500", "500", "1000", "1524", "2524", "4048"]);
    expect(t.phase).toBe("done");
  });
});
