import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadCapture } from "../../tests/fixtures/iperf2/captures.ts";
import { csvTcpLine, csvTimestamp, csvUdpLine } from "./csv-report.ts";

const tcp = loadCapture(join("outputs", "tcp_csv.txt"));
const udp = loadCapture(join("outputs", "udp_csv.txt"));
const client = { host: "127.0.0.1", port: 49050 };
const server = { host: "127.0.0.1", port: 27008 };

describe("-y C lines", () => {
  test("TCP interval lines of the stock client (exact half-second intervals)", () => {
    const at = new Date(2026, 11, 2, 10, 27, 7);
    expect(csvTcpLine({ at, client, server, id: 2, start: 0, end: 0.5, bytes: 655420 })).toBe(tcp.clientOutput[0]!);
    const at2 = new Date(2026, 11, 2, 10, 27, 8);
    expect(csvTcpLine({ at: at2, client, server, id: 2, start: 0.5, end: 1, bytes: 655360 })).toBe(tcp.clientOutput[2]!);
  });

  test("bits per second are truncated: 1441852 bytes over 1.012839 s is 11388597", () => {
    const line = csvTcpLine({ at: null, client, server, id: 1, start: 0, end: 1.012839, bytes: 1441852 });
    expect(line).toBe("19700101000000,127.0.0.1,49050,127.0.0.1,27008,1,0.0-1.0,1441852,11388597");
  });

  test("UDP server lines", () => {
    const at = new Date(2026, 11, 2, 10, 27, 10);
    const u = { at, client: { host: "127.0.0.1", port: 47630 }, server: { host: "127.0.0.1", port: 27009 } };
    expect(csvUdpLine({ ...u, id: 1, start: 0, end: 0.5, bytes: 657090, jitterS: 0, lost: 0, total: 447, outOfOrder: 0 })).toBe(udp.serverOutput[0]!);
    expect(csvUdpLine({ ...u, id: 1, start: 0.5, end: 1, bytes: 655620, jitterS: 0, lost: 0, total: 446, outOfOrder: 0 })).toBe(udp.serverOutput[1]!);
  });

  test("-e (--enhanced) adds milliseconds, as stock 2.1.8 prints them: 20261203092739.699", () => {
    expect(csvTimestamp(new Date(2026, 11, 3, 9, 27, 39, 699), true)).toBe("20261203092739.699");
    expect(csvTimestamp(new Date(2026, 11, 3, 9, 27, 39, 5), true)).toBe("20261203092739.005");
    // The stock server's final line without -i, under -e.
    expect(csvTimestamp(null, true)).toBe("19700101000000.000");
    const at = new Date(2026, 11, 3, 9, 27, 39, 699);
    expect(csvTcpLine({ at, client, server, id: 1, start: 0, end: 1, bytes: 10, millis: true })).toBe("20261203092739.699,127.0.0.1,49050,127.0.0.1,27008,1,0.0-1.0,10,80");
  });

  test("timestamp", () => {
    expect(csvTimestamp(new Date(2026, 0, 5, 3, 4, 5))).toBe("20260105030405");
    expect(csvTimestamp(null)).toBe("19700101000000");
  });
});
