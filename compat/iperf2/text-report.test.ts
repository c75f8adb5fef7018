import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { decodeServerReport } from "../../interop/iperf2/server-report.ts";
import { bwLine, clientBanner, connectionLine, idTag, reportedLine, serverBanner, udpLine, udpSumLine } from "./text-report.ts";

const outputsDir = join(import.meta.dir, "../../tests/fixtures/iperf2/outputs");
const outputs = readdirSync(outputsDir).map((f) => loadCapture(join("outputs", f)));
const captures = ["iperf2-udp.txt", "iperf2-udp-reverse.txt", "iperf2-udp-server-e.txt", "iperf2-tcp.txt"].map((f) => loadCapture(f));

/** Stock UDP receiver lines: "[  1] 0.0000-1.0211 sec   134 KBytes  1.07 Mbits/sec   0.008 ms 0/93 (0%)". */
const UDP_LINE = /^\[( *\*?\d+)\] (\d+\.\d{4})-(\d+\.\d{4}) sec .* {1,3}(\d+\.\d{3}) ms (\d+)\/(\d+) \(/;

describe("text report lines reproduce stock output from the figures behind them", () => {
  test("every stock UDP receiver line (datagram bytes = received datagrams x size)", () => {
    let checked = 0;
    for (const c of [...outputs, ...captures]) {
      const size = /-l (\d+)/.exec(c.commands[0] ?? "")?.[1];
      for (const line of [...c.clientOutput, ...c.serverOutput]) {
        const m = UDP_LINE.exec(line);
        if (!m || line.includes("pps")) continue;
        const [start, end, jitterMs, lost, total] = [Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])];
        const bytes = (total - lost) * Number(size ?? 1470);
        expect(udpLine({ id: m[1]!.trim(), start, end, bytes, jitterS: jitterMs / 1000, lost, total }, "a")).toBe(line);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(14);
  });

  test("TCP lines with known byte counts (60-byte header + 11 paced writes of 128 KiB = 1441852, as CSV showed)", () => {
    const tcp = captures[3]!;
    expect(bwLine({ id: 1, start: 0, end: 1.0012, bytes: 1441852 }, "a")).toBe(tcp.clientOutput.at(-1)!);
    expect(bwLine({ id: 1, start: 0, end: 0.9993, bytes: 1441852 }, "a")).toBe(tcp.serverOutput.at(-1)!);
    expect(bwLine({ id: "SUM", start: 0, end: 2.0002, bytes: 4 * 2 ** 30 }, "a")).toBe("[SUM] 0.0000-2.0002 sec  4.00 GBytes  17.2 Gbits/sec");
    expect(bwLine({ id: "*1", start: 0, end: 1.1014, bytes: 1441792 }, "a")).toBe("[ *1] 0.0000-1.1014 sec  1.38 MBytes  10.5 Mbits/sec");
  });

  test("server UDP sum over -P flows has no jitter column", () => {
    const p = outputs.find((o) => o.commands[0]!.includes("-u -t 1 -P 2"))!;
    expect(udpSumLine({ id: "SUM", start: 0, end: 1.0015, bytes: 1790 * 1470, lost: 0, total: 1790 }, "a")).toBe(p.serverOutput.at(-1)!);
  });

  test("a zero report prints like the stock client does ('0.000 Bytes  -nan bits/sec ... (-nan%)')", () => {
    expect(udpLine({ id: 1, start: 0, end: 0, bytes: 0, jitterS: 0, lost: 0, total: 0 }, "a")).toBe(
      "[  1] 0.0000-0.0000 sec  0.000 Bytes  -nan bits/sec   0.000 ms 0/0 (-nan%)",
    );
  });

  test("banners", () => {
    const udp = captures[0]!;
    expect(clientBanner({ host: "127.0.0.1", port: 20511, udp: true, buffer: 212992, datagramSize: 1470, rateBps: 1048576 })).toEqual(udp.clientOutput.slice(0, 5));
    expect(serverBanner({ port: 20511, udp: true, buffer: 212992 })).toEqual(udp.serverOutput.slice(0, 4));
    const tcp = captures[3]!;
    expect(clientBanner({ host: "127.0.0.1", port: 20501, udp: false, buffer: 16384 })).toEqual(tcp.clientOutput.slice(0, 4));
    expect(serverBanner({ port: 20501, udp: false, buffer: 131072 })).toEqual(tcp.serverOutput.slice(0, 4));
    const ipg = clientBanner({ host: "h", port: 1, udp: true, buffer: 212992, datagramSize: 1470, rateBps: 100 * 2 ** 20 });
    expect(ipg[2]).toBe("Sending 1470 byte datagrams, IPG target: 112.15 us (kalman adjust)");
  });

  test("connection lines and ids", () => {
    expect(connectionLine(1, { host: "127.0.0.1", port: 42130 }, { host: "127.0.0.1", port: 20511 })).toBe(captures[0]!.clientOutput[5]!);
    expect(connectionLine(1, { host: "127.0.0.1", port: 53580 }, { host: "127.0.0.1", port: 20521 }, ["(reverse)"])).toBe(captures[1]!.clientOutput[5]!);
    expect([idTag(1), idTag("*2"), idTag(12), idTag("SUM"), idTag("SUM-2")]).toEqual(["[  1]", "[ *2]", "[ 12]", "[SUM]", "[SUM-2]"]);
  });
});

describe("Server Report lines from the captured report datagrams", () => {
  test("plain and -e reports print what the stock client printed", () => {
    for (const c of [captures[0]!, captures[2]!]) {
      const datagram = c.messages.find((m) => m.length === 128)!.bytes;
      const line = reportedLine(1, decodeServerReport(datagram), "a");
      expect(line.text).toBe(c.clientOutput.at(-1)!);
      expect(line.heading).toBe(c.clientOutput.at(-2)!);
    }
  });

  test("a reply too short to decode prints the zero line", () => {
    expect(reportedLine(1, null, "a").text).toBe("[  1] 0.0000-0.0000 sec  0.000 Bytes  -nan bits/sec   0.000 ms 0/0 (-nan%)");
  });
});
