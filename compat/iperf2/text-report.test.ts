import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { decodeServerReport } from "../../interop/iperf2/server-report.ts";
import { NO_SAMPLES, runningStatsAdd } from "../../src/formulas.ts";
import { connectionNotes, wallClockText } from "./connection-notes.ts";
import {
  HEADER_TCP_WRITE_ENHANCED,
  HEADER_UDP_WRITE_ENHANCED,
  bwLine,
  isochronousLine,
  tcpWriteIsochLine,
  udpIsochLine,
  clientBanner,
  connectionLine,
  idTag,
  netPowerText,
  reportedLine,
  serverBanner,
  tcpWriteEnhancedLine,
  tcpWriteEnhancedSumLine,
  udpLine,
  udpSumLine,
  udpWriteEnhancedLine,
} from "./text-report.ts";

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

describe("-e (enhanced) TCP lines against stock 2.1.8 output (outputs/tcp_e.txt, udp_e.txt, tcp_fd.txt)", () => {
  const byCmd = (flag: string) => outputs.find((o) => o.commands.some((c) => c.includes(flag)))!;
  const tcpE = byCmd("-t 2 -e -i 1 -b 50M");
  const udpE = byCmd("-u -t 2 -e -i 1 -b 10M");

  test("banners: pid, write buffer, TOS/Nagle, read buffer with its histogram bin width", () => {
    expect(clientBanner({ host: "127.0.0.1", port: 27003, udp: false, buffer: 16384, enhanced: true, pid: 5830, writeLen: 131072, flows: 1 })).toEqual(tcpE.clientOutput.slice(0, 6));
    expect(serverBanner({ port: 27003, udp: false, buffer: 131072, enhanced: true, pid: 5802, readLen: 131072 })).toEqual(tcpE.serverOutput.slice(0, 5));
    expect(clientBanner({ host: "127.0.0.1", port: 27006, udp: true, buffer: 212992, enhanced: true, pid: 6818, datagramSize: 1470, rateBps: 10 * 2 ** 20, flows: 1 })).toEqual(udpE.clientOutput.slice(0, 6));
    expect(serverBanner({ port: 27006, udp: true, buffer: 212992, enhanced: true, pid: 6802, readLen: 1470 })).toEqual(udpE.serverOutput.slice(0, 5));
    const nagleOff = clientBanner({ host: "h", port: 1, udp: false, buffer: 16384, enhanced: true, pid: 1, writeLen: 8, tos: 0x10, noDelay: true });
    expect(nagleOff).toContain("TOS set to 0x10 and nodelay (Nagle off)");
  });

  test("sender lines: writes, retries, cwnd/RTT(var) and NetPwr (the first interval carries the 60-byte header)", () => {
    const [first, second, final] = tcpE.clientOutput.slice(-3);
    const tcp = (rttUs: number, rttVarUs: number) => ({ retry: 0, cwndK: 1151, rttUs, rttVarUs });
    expect(tcpWriteEnhancedLine({ id: 1, start: 0, end: 1, bytes: 50 * 131072 + 60 }, 50, 0, tcp(55, 18), "a")).toBe(first!);
    expect(tcpWriteEnhancedLine({ id: 1, start: 1, end: 2, bytes: 50 * 131072 }, 50, 0, tcp(32, 7), "a")).toBe(second!);
    expect(tcpE.clientOutput.at(-4)).toBe(HEADER_TCP_WRITE_ENHANCED);
    // The final line's duration is printed to 4 decimals only; the byte count is 101 writes + header.
    const line = tcpWriteEnhancedLine({ id: 1, start: 0, end: 2.02792, bytes: 101 * 131072 + 60 }, 101, 0, tcp(33, 8), "a");
    expect(line).toBe(final!);
  });

  test("UDP sender lines: writes/errors and the packet rate", () => {
    const [first, , final] = udpE.clientOutput.slice(8, 11);
    expect(udpE.clientOutput[7]).toBe(HEADER_UDP_WRITE_ENHANCED);
    expect(udpWriteEnhancedLine({ id: 1, start: 0, end: 1, bytes: 892 * 1470 }, 892, 0, 894, "a")).toBe(first!);
    // The final total counts the FIN datagram (1787 x 1470), the write count does not.
    expect(udpWriteEnhancedLine({ id: 1, start: 0, end: 2.002, bytes: 1787 * 1470 }, 1786, 0, 893, "a")).toBe(final!);
  });

  test("without TCP_INFO the window column reads NA and NetPwr NAN", () => {
    const line = tcpWriteEnhancedLine({ id: 2, start: 0, end: 1, bytes: 1000 }, 3, 0, { retry: 0, cwndK: null, rttUs: 0, rttVarUs: 0 }, "a");
    expect(line).toBe("[  2] 0.0000-1.0000 sec  1000 Bytes  8.00 Kbits/sec  3/0          0       NA/0 us  NAN");
  });

  test("sum of senders: writes/errors and retries", () => {
    expect(tcpWriteEnhancedSumLine({ start: 0, end: 1, bytes: 3 * 2 ** 20 }, 24, 0, 5, "a")).toBe("[SUM] 0.0000-1.0000 sec  3.00 MBytes  25.2 Mbits/sec  24/0         5");
  });

  test("NetPwr text: integer above 100, two decimals above 10, six below; NAN without delay", () => {
    expect([netPowerText(119157.45), netPowerText(42.123), netPowerText(0.5), netPowerText(Number.NaN), netPowerText(-2e7)]).toEqual(["119157", "42.12", "0.500000", "NAN", "OBL"]);
  });

  test("connection lines: direction, handshake figures; with -e socket, peer version, interface and time", () => {
    const fd = outputs.find((o) => o.commands.some((c) => c.includes("--full-duplex")))!;
    const init = (cwndK: number, mss: number, rttUs: number) => ({ cwndK, mss, rttUs });
    expect(connectionLine(1, { host: "127.0.0.1", port: 36124 }, { host: "127.0.0.1", port: 27016 }, connectionNotes({ direction: "full-duplex", enhanced: false, init: init(319, 32741, 29) }))).toBe(
      fd.clientOutput[4]!,
    );
    const at = new Date(2026, 11, 2, 10, 26, 41);
    const server = connectionLine(1, { host: "127.0.0.1%lo", port: 27003 }, { host: "127.0.0.1", port: 58772 }, connectionNotes({ enhanced: true, sock: 4, peerVersion: "2.1.8", init: init(320, 32768, 16), at }));
    const client = connectionLine(1, { host: "127.0.0.1%lo", port: 58772 }, { host: "127.0.0.1", port: 27003 }, connectionNotes({ enhanced: true, sock: 3, init: init(319, 32741, 28), connectMs: 0.67, at }));
    // The fixture was taken in UTC; the zone name is whatever this machine's is.
    const zone = /\(.*\)$/.exec(wallClockText(at))![0];
    expect(server).toBe(tcpE.serverOutput[5]!.replace("(UTC)", zone));
    expect(client).toBe(tcpE.clientOutput[6]!.replace("(UTC)", zone));
  });
});

describe("an --isochronous --trip-times flow's line (2.1.8's udp_output_read_triptime_isoch)", () => {
  test("frames received/lost and the frame latency follow the datagrams' columns; NetPwr over the datagrams' latency", () => {
    const frameLatency = runningStatsAdd(runningStatsAdd(NO_SAMPLES, 0.0001), 0.0007);
    const line = udpIsochLine(
      { id: 1, start: 0, end: 1, bytes: 2_506_000, jitterS: 0.000001, lost: 0, total: 1741 },
      { meanS: 0.000002, minS: 0, maxS: 0.000199, stdevS: 0.000009, pps: 1770 },
      { frames: 61, lost: 0, latency: frameLatency },
      "a",
    );
    expect(line).toBe("[  1] 0.0000-1.0000 sec  2.39 MBytes  20.0 Mbits/sec   0.001 ms 0/1741 (0%) 0.002/0.000/0.199/0.009 ms 1770 pps   61/0  0.400/0.100/0.700/0.424 ms 1253000");
  });
});

describe("an --isochronous client's lines (2.1.8)", () => {
  test("the banner's Isochronous line: frame rate, mean and deviation in bits, period and gap in whole µs", () => {
    expect(isochronousLine({ perSecond: 60, meanBps: 20e6, stddevBps: 0, ipgMs: 0 })).toBe(
      "Isochronous: 60.00 frames/sec mean=20.0 Mbit/s, stddev=0.000 bit/s, Period/IPG=16.67/0.000 ms",
    );
    expect(isochronousLine({ perSecond: 30, meanBps: 2e6, stddevBps: 1e5, ipgMs: 0.1 })).toBe(
      "Isochronous: 30.00 frames/sec mean=2.00 Mbit/s, stddev= 100 Kbit/s, Period/IPG=33.33/0.100 ms",
    );
  });

  test("the sender's -e line adds isoch:tx/miss/slip", () => {
    const line = udpWriteEnhancedLine({ id: 1, start: 0, end: 1, bytes: 2_506_000 }, 1741, 0, 1741, "a", { sent: 61, missed: 0, slips: 0 });
    expect(line).toBe("[  1] 0.0000-1.0000 sec  2.39 MBytes  20.0 Mbits/sec  1741/0     1741 pps   61/0/0");
  });
});

test("an --isochronous TCP sender's -e line, as stock 2.1.8 printed it", () => {
  const line = tcpWriteIsochLine({ id: 1, start: 0, end: 1, bytes: 60 * 41666 }, 60, 0, { retry: 0, cwndK: 767, rttUs: 31498, rttVarUs: 0 }, { sent: 61, missed: 0, slips: 0 }, "a");
  expect(line).toBe("[  1] 0.0000-1.0000 sec  2.38 MBytes  20.0 Mbits/sec  60/0        0      767K/31498 us         61/0/0        79.37");
});
