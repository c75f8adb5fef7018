import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { hasStockIperf, ours, type Proc, session, stock, waitListening } from "./iperf2-harness.ts";

/**
 * `-e -y C` (--enhanced --reportstyle C) against stock iperf 2.1.8: every timestamp has the form stock prints in the
 * same role (YYYYMMDDHHMMSS.mmm, the server's final line without -i 19700101000000.000), and ours carry real
 * milliseconds. Each case runs stock against stock for the reference, then ours in that role. Ports 35300-35399.
 */

const L = "127.0.0.1";
const absent = !hasStockIperf();

/** The timestamp of each CSV line, digits of a real time masked: "T.mmm", "T", or the epoch-zero literal. */
function shapes(text: string): string[] {
  const stamps = text.split("\n").filter((l) => /^\d{14}/.test(l)).map((l) => l.split(",")[0]!);
  return [...new Set(stamps.map((t) => (t.startsWith("19700101000000") ? t : t.replace(/^\d{14}/, "T").replace(/\.\d{3}$/, ".mmm"))))].sort();
}

/** Wall-clock ms of a "YYYYMMDDHHMMSS.mmm" stamp (local time). */
function wallMs(t: string): number {
  const m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)\.(\d{3})$/.exec(t);
  if (!m) throw new Error(`not an enhanced timestamp: ${t}`);
  const [, y, mo, d, h, mi, s, ms] = m.map(Number);
  return new Date(y!, mo! - 1, d!, h!, mi!, s!, ms!).getTime();
}

async function pairing(server: (a: string[]) => Proc, client: (a: string[]) => Proc, port: number, serverArgs: string[], clientArgs: string[], udp: boolean) {
  const srv = server(["-s", "-p", String(port), "-e", "-y", "C", ...serverArgs]);
  // CSV servers print no banner: wait for the listening socket instead.
  await waitListening(port, udp ? "udp" : "tcp");
  return session(srv, /.*/, () => client(["-c", L, "-p", String(port), "-t", "1", "-e", "-y", "C", ...clientArgs]), 20_000);
}

const cases = [
  { name: "TCP, -i 0.5 on both sides", udp: false, server: ["-i", "0.5"], client: ["-i", "0.5"] },
  { name: "TCP, no -i (final lines are at the epoch on both sides)", udp: false, server: [], client: [] },
  { name: "UDP, -i 0.5 on both sides", udp: true, server: ["-u", "-i", "0.5"], client: ["-u", "-b", "10M", "-i", "0.5"] },
];

describe("iperf 2 -e -y C timestamps as stock 2.1.8's", () => {
  let port = 35300;
  // Each pairing takes the next port no socket holds (the range is also the kernel's ephemeral one).
  const next = () => {
    port = freePorts(port, 35400, 1);
    return port++;
  };
  for (const c of cases) {
    test.skipIf(absent)(`${c.name}: our client, then our server`, async () => {
      const ref = await pairing(stock, stock, next(), c.server, c.client, c.udp);
      const t0 = Date.now();
      const oursClient = await pairing(stock, ours, next(), c.server, c.client, c.udp);
      const oursServer = await pairing(ours, stock, next(), c.server, c.client, c.udp);
      expect(shapes(ref.client.out)).toContain(c.client.includes("-i") ? "T.mmm" : "19700101000000.000");
      expect(shapes(oursClient.client.out)).toEqual(shapes(ref.client.out));
      expect(shapes(oursServer.server)).toEqual(shapes(ref.server));
      // Real milliseconds: interval lines fall at the test's start plus the interval ends, within a few seconds of now.
      const stamps = oursClient.client.out.split("\n").filter((l) => /^\d{14}\.\d{3},/.test(l) && !l.startsWith("19700101000000")).map((l) => wallMs(l.split(",")[0]!));
      for (const t of stamps) expect(Math.abs(t - t0)).toBeLessThan(10_000);
    }, 90_000);
  }
});
