/**
 * The global status endpoint (--http) on the netperf dialect, with stock netperf 2.7.0 as the client: each test a
 * control connection asks anyperf netserver for is a TestRun that /status shows while its data phase runs, and
 * whose results document /results serves once it is done, counting the transactions the stock client made.
 * Ports 26900 (control), 26901 (HTTP), 26902-26903 (data).
 */
import { describe, expect, test } from "bun:test";
import { pollStatus } from "../../src/status/poll.ts";
import type { StatusDocument } from "../../src/status/schema.ts";
import { finish, hasStockNetperf, keyvals, oursNetserver, sleep, stockNetperf, waitListening } from "./netperf-harness.ts";

const CONTROL = 26900;
const HTTP = 26901;
const BASE = `http://127.0.0.1:${HTTP}/`;

interface ResultsDoc {
  mode: string;
  role: string;
  peer?: string;
  transport: string;
  test: string;
  phases: { measured_s: number };
  summary: { transactions?: number };
  streams: Array<{ side: string }>;
}

async function waitHttp(url: string, ms = 8000): Promise<void> {
  for (const end = Date.now() + ms; ; ) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`${url} did not answer within ${ms} ms`);
    await sleep(50);
  }
}

describe.skipIf(!hasStockNetperf())("netserver tests on the status endpoint", () => {
  test(
    "anyperf netserver --http: a stock TCP_RR shows live with transactions, then /results has its document",
    async () => {
      const server = oursNetserver(["-D", "-p", String(CONTROL), "--http", `127.0.0.1:${HTTP}`]);
      try {
        await waitListening(CONTROL, 10_000);
        await waitHttp(`${BASE}status`);
        const stop = new AbortController();
        const docs: StatusDocument[] = [];
        const polling = pollStatus(BASE, { hz: 10, durationMs: 20_000, signal: stop.signal, onDocument: (d) => docs.push(d) });
        const rr = await finish(
          stockNetperf(["-H", "127.0.0.1", "-p", String(CONTROL), "-l", "2", "-P", "0", "-t", "TCP_RR", "--", "-P", "26902,26903", "-k", "LOCAL_SEND_CALLS,TRANSACTION_RATE"]),
          20_000,
        );
        stop.abort();
        const report = await polling;
        expect({ code: rr.code, err: rr.err }).toEqual({ code: 0, err: "" });
        expect({ failures: report.failures, invalid: report.invalid }).toEqual({ failures: 0, invalid: 0 });

        const live = docs.filter((d) => d.test?.phase === "measuring");
        expect(live.length).toBeGreaterThan(10);
        for (const d of live) {
          expect([d.test!.mode, d.test!.role]).toEqual(["netserver", "server"]);
          expect(d.test!.peer).toMatch(/^127\.0\.0\.1:\d+$/);
          expect(d.test!.durationSeconds).toBe(2);
        }
        expect(live.at(-1)!.test!.transactions).toBeGreaterThan(0);
        expect(live.at(-1)!.test!.streams.map((s) => s.side)).toEqual(["server"]);

        // The document counts what the stock client counted: one send call per transaction at -r 1,1.
        await sleep(300);
        const res = await fetch(`${BASE}results`);
        expect(res.status).toBe(200);
        const doc = (await res.json()) as ResultsDoc;
        expect([doc.mode, doc.role, doc.transport, doc.test]).toEqual(["netserver", "server", "tcp", "rr"]);
        expect(doc.streams.map((s) => s.side)).toEqual(["server"]);
        expect(doc.phases.measured_s).toBeGreaterThan(1.5);
        const stockCalls = Number(keyvals(rr.out).LOCAL_SEND_CALLS);
        expect(stockCalls).toBeGreaterThan(0);
        // The window opens when the server's data phase starts and closes when it ends, so it holds (nearly) all of them.
        expect(Math.abs((doc.summary.transactions ?? 0) - stockCalls) / stockCalls).toBeLessThan(0.01);
      } finally {
        server.kill();
        await server.done;
      }
    },
    40_000,
  );
});
