/**
 * Our `iperf -c --bounceback` against the stock 2.1.8 server, trixie's 2.2.1 and our own `iperf -s`. The option was
 * refused before; now the client runs the bursts the stock client runs (10 requests per period), reads each reply
 * whole at the reply size asked for, and prints 2.1.8's lines; the server notes the bounceback connection and counts
 * what went both ways, which must agree with the client's round trips.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { formatUnits } from "../../compat/iperf2/units.ts";
import { type Proc, oursMain, session, stockPeer } from "./iperf2-harness.ts";

/** "3.91 KByte": how iperf 2 prints `bytes` (the lines add the "s"). */
const transfer = (bytes: number) => formatUnits(bytes, "A").trim();

/**
 * Round trips a test of `bursts` bursts of 10 makes: all of them, unless a loaded host delays a burst past its period
 * (its last requests are then given up, as stock gives them up). The bytes must agree with the count either way.
 */
function expectTrips(f: { count: number; pdfCount: number; transfer: string }, bursts: number, bytesEach: number): void {
  expect(f.count).toBeGreaterThanOrEqual(bursts * 10 - 5);
  expect(f.count).toBeLessThanOrEqual(bursts * 10);
  expect([f.pdfCount, f.transfer]).toEqual([f.count, transfer(f.count * bytesEach)]);
}

/** The client's final line ("0.0000-2.0087 sec  3.91 KBytes ... 20=0.254/...") and its histogram line's count. */
function finalFigures(out: string): { transfer: string; count: number; minMs: number; pdfCount: number } {
  const lines = out.split("\n");
  const pdf = lines.findIndex((l) => l.includes("BB8(f)-PDF"));
  const m = /\] 0\.0000-\d\.\d{4} sec +([\d.]+ \w+)s +[\d.]+ \w+\/sec +(\d+)=[\d.]+\/([\d.]+)\//.exec(lines[pdf - 1] ?? "");
  const c = /cnt\((\d+)\)/.exec(lines[pdf] ?? "");
  if (!m || !c) throw new Error(`no final bounceback lines in:\n${out}`);
  return { transfer: m[1]!, count: Number(m[2]), minMs: Number(m[3]), pdfCount: Number(c[1]) };
}

/** The server's total for the connection: "[  1] 0.0000-2.0009 sec  3.91 KBytes  16.0 Kbits/sec". */
const serverTransfer = (out: string): string | undefined => /\] 0\.0+-\d+\.\d+ sec +([\d.]+ \w+)s/.exec(out)?.[1];

interface Server {
  label: string;
  start(port: number): Proc;
  /** The stock 2.2.1 server notes every connection in its req/reply words; 2.1.8 and ours in 2.1.8's. */
  v22: boolean;
  runs: boolean;
}

const servers: Server[] = [
  ...iperf2Peers().map((p) => ({ label: p.label, start: (port: number) => stockPeer(p)(["-s", "-p", String(port)]), v22: p.version?.startsWith("2.2") ?? false, runs: p.version !== undefined })),
  { label: "anyperf iperf -s", start: (port: number) => oursMain(["-s", "-p", String(port)]), v22: false, runs: true },
];

const run = (srv: Server, args: string[]) => {
  const port = freePorts(27980, 27999, 1);
  return session(srv.start(port), /Server listening/, () => oursMain(["-c", "127.0.0.1", "-p", String(port), "--bounceback", ...args]), 20_000);
};

for (const srv of servers) {
  describe(`anyperf iperf -c --bounceback against ${srv.label}`, () => {
    test.skipIf(!srv.runs)("-t 2: two bursts of 10 round trips, 100 bytes each way, an interval line a second; the server counts the same bytes", async () => {
      const r = await run(srv, ["-t", "2"]);
      expect(r.client.code, r.client.out).toBe(0);
      const f = finalFigures(r.client.out);
      expectTrips(f, 2, 200);
      expect(r.client.out.match(/\] [01]\.0000-[12]\.0000 sec .* \d+=/g)?.length).toBe(2);
      expect(r.client.out).toContain("(bb w/quickack len/hold=100/0)");
      expect(r.server).toContain(srv.v22 ? "(bb w/quickack req/reply/hold=100/100/0)" : "(bb w/quickack len/hold=100/0)");
      expect(serverTransfer(r.server)).toBe(transfer(f.count * 200));
    }, 60_000);

    test.skipIf(!srv.runs)("--bounceback-no-quickack --bounceback-hold 2 -t 1: one burst of 10, the server notes the hold without quickack", async () => {
      const r = await run(srv, ["--bounceback-no-quickack", "--bounceback-hold", "2", "-t", "1"]);
      expect(r.client.code, r.client.out).toBe(0);
      const f = finalFigures(r.client.out);
      expectTrips(f, 1, 200);
      expect(r.server).toContain(srv.v22 ? "(bb req/reply/hold=100/100/2000)" : "(bb len/hold=100/2000)");
      // 2.1.8's server and ours hold each reply; 2.2.1's reads the hold and answers at once (docs/protocols/iperf2.md §2.8).
      if (!srv.v22) expect(f.minMs).toBeGreaterThanOrEqual(2);
    }, 60_000);

    test.skipIf(!srv.runs || srv.label.includes("2.1.8"))(
      "--bounceback-request 200 --bounceback-reply 300 --bounceback-period 0.5 -t 1: 20 replies of 300 bytes, 9.77 KBytes both ways",
      async () => {
        const r = await run(srv, ["--bounceback-request", "200", "--bounceback-reply", "300", "--bounceback-period", "0.5", "-t", "1"]);
        expect(r.client.code, r.client.out).toBe(0);
        const f = finalFigures(r.client.out);
        expectTrips(f, 2, 500);
        expect(r.server).toContain("(bb w/quickack req/reply/hold=200/300/0)");
        expect(serverTransfer(r.server)).toBe(transfer(f.count * 500));
      },
      60_000,
    );
  });
}

test.skipIf(!servers[0]!.runs)("-y C against the stock 2.1.8 server: 2.1.8's CSV lines, an interval and the final, both directions counted", async () => {
  const r = await run(servers[0]!, ["-t", "1", "-y", "C"]);
  expect(r.client.code, r.client.out).toBe(0);
  const lines = r.client.out.trim().split("\n");
  expect(lines.length).toBe(2);
  expect(lines[0]).toMatch(/^\d{14}\.\d{3},127\.0\.0\.1,\d+,127\.0\.0\.1,\d+,1,0\.0-1\.0,2000,16000$/);
  expect(lines[1]).toMatch(/^\d{14}\.\d{3},127\.0\.0\.1,\d+,127\.0\.0\.1,\d+,1,0\.0-1\.\d,2000,1\d{4}$/);
}, 60_000);
