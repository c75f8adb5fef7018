/**
 * Issue 21 item 16 (iperf 2 client), side by side with stock iperf 2.1.8 against servers written here: a TCP server
 * that accepts and reads everything but never answers nor closes, and a UDP server that reads every datagram and
 * never sends the report. Stock ends the TCP test at -t without waiting for the server; over UDP it resends its FIN
 * for about 2 s, then warns on stderr. Ours does the same, and a signal during that wait ends it at once with the
 * report of what was sent. The servers listen on ephemeral ports.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { hasTool } from "../support/processes.ts";
import { anyperf, dump, interruptAfter, stock, type Child, type Finished } from "./harness.ts";

const HAVE_STOCK = hasTool(["iperf", "-v"], /iperf version 2\./);

interface Silent {
  port: number;
  close(): void;
}

/** Accepts, reads and drops everything, never writes, never closes. */
function silentTcpReader(): Silent {
  const held: { end(): void }[] = [];
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void held.push(s), data: () => {}, error: () => {} } });
  return { port: l.port, close: () => l.stop(true) };
}

/** Reads every datagram, answers none (no server report). */
async function silentUdp(): Promise<Silent> {
  const u = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data: () => {} } });
  return { port: u.port, close: () => u.close() };
}

const servers: Silent[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function timed(c: Child): Promise<Finished & { ms: number }> {
  const t0 = performance.now();
  const f = await c.done;
  return { ...f, ms: performance.now() - t0 };
}

const REPORT = /\[\s*1\]\s+0\.0000-(\d+\.\d+) sec\s+[\d.]+ [KMG]Bytes/;
const WARNING = "[  3] WARNING: did not receive ack of last datagram after 10 tries.\n";

describe("iperf -c against a TCP server that reads and never answers", () => {
  test.skipIf(!HAVE_STOCK)("-t 1: stock and ours end at the test's end, not after a wait for the server", async () => {
    const s = silentTcpReader();
    servers.push(s);
    const args = ["-c", "127.0.0.1", "-p", String(s.port), "-t", "1"];
    const ref = await timed(stock("iperf", args));
    expect(ref.ms).toBeLessThan(2_000);
    const ours = await timed(anyperf(["iperf", ...args]));
    expect(ours.code, dump(ours)).toBe(0);
    // Ours starts a runtime and its Workers first (up to a second on a loaded host), and ends as stock does.
    expect(ours.ms, dump(ours)).toBeLessThan(ref.ms + 2_000);
    expect(Number(REPORT.exec(ours.stdout)?.[1])).toBeLessThan(1.5);
  }, 30_000);

  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    test(`${sig} mid-test (-t 10): ends at once with the report so far`, async () => {
      const s = silentTcpReader();
      servers.push(s);
      const f = await interruptAfter(anyperf(["iperf", "-c", "127.0.0.1", "-p", String(s.port), "-t", "10"]), 2_000, sig);
      expect(f.signal, dump(f)).toBeNull();
      expect(f.afterSignalMs!, dump(f)).toBeLessThan(1_500);
      expect(Number(REPORT.exec(f.stdout)?.[1]), dump(f)).toBeLessThan(3);
    }, 30_000);
  }
});

describe("iperf -c -u against a UDP server that never sends its report", () => {
  test.skipIf(!HAVE_STOCK)("-t 1: the FIN is resent for about 2 s, then stock's warning on stderr", async () => {
    const s = await silentUdp();
    servers.push(s);
    const args = ["-c", "127.0.0.1", "-p", String(s.port), "-u", "-t", "1"];
    const ref = await timed(stock("iperf", args));
    expect(ref.stderr).toBe(WARNING);
    const ours = await timed(anyperf(["iperf", ...args]));
    expect(ours.code, dump(ours)).toBe(0);
    expect(ours.stderr, dump(ours)).toBe(WARNING);
    expect(ours.stdout).not.toContain("WARNING");
    expect(ours.ms, dump(ours)).toBeGreaterThan(ref.ms - 1_000);
    expect(ours.ms, dump(ours)).toBeLessThan(ref.ms + 2_000);
  }, 30_000);

  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    test(`${sig} during that wait ends it at once, with the report of what was sent`, async () => {
      const s = await silentUdp();
      servers.push(s);
      const c = anyperf(["iperf", "-c", "127.0.0.1", "-p", String(s.port), "-u", "-t", "1"]);
      // Sending starts with the connection line; 1.5 s later the 1 s test is over and the wait for the report runs.
      const start = performance.now();
      while (!/connected with/.test(c.out()) && performance.now() - start < 10_000) await Bun.sleep(20);
      const f = await interruptAfter(c, 1_500, sig);
      expect(f.code, dump(f)).toBe(0);
      expect(f.afterSignalMs!, dump(f)).toBeLessThan(700);
      expect(Number(REPORT.exec(f.stdout)?.[1]), dump(f)).toBeLessThan(1.5);
      expect(f.stdout).toMatch(/\[\s*1\] Sent \d+ datagrams/);
      expect(f.stderr).toBe(WARNING);
    }, 30_000);
  }
});
