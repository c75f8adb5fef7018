import { describe, expect, test } from "bun:test";
import { NO_SAMPLES, runningStatsAdd } from "../../src/formulas.ts";
import { bouncebackBanner, bouncebackBin, bouncebackLine, bouncebackPdfLine } from "./bounceback-report.ts";

/** Lines printed by the stock 2.1.8 client (`iperf -c 127.0.0.1 -p P --bounceback ...` against a 2.1.8 server). */
const bb = { size: 100, replySize: 100, burst: 10, periodS: 1, holdUs: 0, quickAck: true, defaultInterval: true };
const tcp = (cwndK: number, rttUs: number) => ({ retry: 0, cwndK, rttUs, rttVarUs: 0 });
const trips = (ms: number[]) => ms.map((x) => x / 1000).reduce(runningStatsAdd, NO_SAMPLES);

describe("iperf 2.1.8 --bounceback client lines", () => {
  test("banner (defaults; --bounceback=3 --bounceback-no-quickack; --bounceback-hold 2 --bounceback-period 0.5; period 0)", () => {
    const banner = (o: Partial<typeof bb>, tos = 0) => bouncebackBanner({ host: "127.0.0.1", port: 27873, pid: 29698, bb: { ...bb, ...o }, tos, buffer: 16384 });
    expect(banner({})).toEqual([
      "------------------------------------------------------------",
      "Client connecting to 127.0.0.1, TCP port 27873 with pid 29698 (1 flows)",
      "Write buffer size:  100 Byte",
      "Bursting:  100 Byte writes 10 times every 1.00 second(s)",
      "Bounce-back test (size= 100 Byte) (server hold req=0 usecs & tcp_quickack)",
      "TOS set to 0x0 and nodelay (Nagle off)",
      "TCP window size: 16.0 KByte (default)",
      "------------------------------------------------------------",
    ]);
    expect(banner({ burst: 3, quickAck: false })).toContain("Bounce-back test (size= 100 Byte) (server hold req=0 usecs)");
    expect(banner({ burst: 3 })).toContain("Bursting:  100 Byte writes 3 times every 1.00 second(s)");
    expect(banner({ holdUs: 2000, periodS: 0.5 })).toContain("Bounce-back test (size= 100 Byte) (server hold req=2000 usecs & tcp_quickack)");
    expect(banner({ periodS: 0 }).some((l) => l.startsWith("Bursting"))).toBe(false);
    expect(banner({}, 0x10)).toContain("TOS set to 0x10 and nodelay (Nagle off)");
  });

  test("interval and final lines", () => {
    expect(bouncebackLine({ id: 1, start: 0, end: 1, bytes: 400, trips: trips([5.367, 6.525]), tcp: tcp(384, 23) }, "a")).toBe(
      "[  1] 0.0000-1.0000 sec   400 Bytes  3.20 Kbits/sec    2=5.946/5.367/6.525/0.819 ms    0  384K/23 us    168 rps",
    );
    expect(bouncebackLine({ id: 1, start: 0, end: 1.013, bytes: 600, trips: trips([5.367, 6.525, 1.189]), tcp: tcp(448, 1471) }, "a")).toBe(
      "[  1] 0.0000-1.0130 sec   600 Bytes  4.74 Kbits/sec    3=4.360/1.189/6.525/2.807 ms    0  448K/1471 us    229 rps",
    );
    expect(bouncebackLine({ id: 1, start: 0.5, end: 1, bytes: 0, trips: NO_SAMPLES, tcp: tcp(576, 61) }, "a")).toBe(
      "[  1] 0.5000-1.0000 sec  0.000 Bytes  0.000 bits/sec    0=0.000/0.000/0.000/0.000 ms    0  576K/61 us    0.0 rps",
    );
  });

  test("the final histogram line: 100 µs bins numbered from 1", () => {
    const bins = new Map<number, number>();
    for (const ms of [1.189, 5.367, 6.525]) {
      const b = bouncebackBin(ms / 1000)!;
      bins.set(b, (bins.get(b) ?? 0) + 1);
    }
    expect(bouncebackPdfLine(1, 0, 1.013, bins, { low: 0, high: 0 })).toBe(
      "[  1] 0.0000-1.0130 sec BB8(f)-PDF: bin(w=100us):cnt(3)=12:1,54:1,66:1 (5.00/95.00/99.7%=12/66/66,Outliers=0,obl/obu=0/0)",
    );
    expect(bouncebackBin(11)).toBeNull();
    expect(bouncebackPdfLine(1, 0, 1, new Map(), { low: 0, high: 0 })).toBe("[  1] 0.0000-1.0000 sec BB8(f)-PDF: bin(w=100us):cnt(0) (5.00/95.00/99.7%=0/100000/100000,Outliers=0,obl/obu=0/0)");
  });
});
