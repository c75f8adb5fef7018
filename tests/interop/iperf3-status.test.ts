/**
 * The global status endpoint (--http) on the iperf3 dialect, with stock iperf3 3.12 as the peer: every iperf3 test
 * (each client's test on a server, the test of a client) is a TestRun that /status lists while it runs and whose
 * results document /results serves once it is done, with the byte counts the stock peer reported.
 */
import { describe, expect, test } from "bun:test";
import { StatusDocument } from "../../src/status/schema.ts";
import { assertFree, disagreement, hasStockIperf3, json, oursMain, sleep, stock, waitListening } from "./iperf3-harness.ts";

const HAVE = hasStockIperf3();

interface ResultsDoc {
  mode: string;
  role: string;
  peer?: string;
  transport: string;
  summary: { bytes: number; packets?: number; lost?: number };
  phases: { measured_s: number };
  streams: Array<{ side: string }>;
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url);
  return { status: r.status, body: await r.json() };
}

async function waitHttp(url: string, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`${url} did not answer within ${ms} ms`);
    await sleep(50);
  }
}

/** Polls /status every 100 ms until `until` settles, keeping every document. */
async function watch(base: string, until: Promise<unknown>): Promise<StatusDocument[]> {
  const docs: StatusDocument[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const r = await getJson(`${base}/status`);
    expect(r.status).toBe(200);
    docs.push(StatusDocument.parse(r.body));
    await sleep(100);
  }
  return docs;
}

describe.skipIf(!HAVE)("iperf3 tests on the status endpoint", () => {
  test(
    "anyperf iperf3 -s --http: each stock client's test shows while it runs, then /results has its document",
    async () => {
      const p = 25170;
      const h = 25171;
      const base = `http://127.0.0.1:${h}`;
      assertFree(p);
      assertFree(h);
      const server = oursMain(["-s", "-p", String(p), "--http", `127.0.0.1:${h}`]);
      try {
        await waitListening(p);
        await waitHttp(`${base}/status`);
        const udp = stock(["-c", "127.0.0.1", "-p", String(p), "-u", "-b", "20M", "-P", "2", "-t", "3", "-J"]).done;
        const docs = await watch(base, udp);
        const u = await udp;
        expect(u.code, u.stderr).toBe(0);
        const live = docs.filter((d) => d.test?.phase === "measuring");
        expect(live.length).toBeGreaterThan(10);
        for (const d of live) {
          expect(d.test!.mode).toBe("iperf3");
          expect(d.test!.role).toBe("server");
          expect(d.test!.peer).toMatch(/^127\.0\.0\.1:\d+$/);
          expect(d.test!.durationSeconds).toBe(3);
        }
        expect(live.at(-1)!.test!.streams.map((s) => s.side)).toEqual(["recv", "recv"]);
        expect(live.at(-1)!.test!.throughput.current).toBeGreaterThan(15e6);

        const tcp = await stock(["-c", "127.0.0.1", "-p", String(p), "-R", "-b", "200M", "-t", "2", "-J"]).done;
        expect(tcp.code, tcp.stderr).toBe(0);
        await sleep(300);
        const status = StatusDocument.parse((await getJson(`${base}/status`)).body);
        expect(status.recent.length).toBe(2);
        const [tcpRun, udpRun] = status.recent;
        for (const r of status.recent) {
          expect(r.phase).toBe("done");
          expect(r.results).toBe(`/results/${r.id}`);
        }

        // The documents count what the stock client reported sending (UDP) and receiving (TCP -R).
        const udpDoc = (await getJson(`${base}${udpRun!.results}`)).body as ResultsDoc;
        expect([udpDoc.mode, udpDoc.role, udpDoc.transport]).toEqual(["iperf3", "server", "udp"]);
        const stockSent = json(u).end.sum_sent!;
        expect(disagreement(udpDoc.summary.bytes, stockSent.bytes!)).toBeLessThan(0.02);
        expect(udpDoc.phases.measured_s).toBeGreaterThan(2.9);
        const tcpDoc = (await getJson(`${base}${tcpRun!.results}`)).body as ResultsDoc;
        expect([tcpDoc.mode, tcpDoc.role, tcpDoc.transport]).toEqual(["iperf3", "server", "tcp"]);
        expect(tcpDoc.streams.map((s) => s.side)).toEqual(["send"]);
        expect(disagreement(tcpDoc.summary.bytes, json(tcp).end.sum_received!.bytes!)).toBeLessThan(0.02);
        expect((await getJson(`${base}/results/999`)).status).toBe(404);
      } finally {
        server.kill();
        await server.done;
      }
    },
    60_000,
  );

  test(
    "anyperf iperf3 -c --http: the client's test and its results document",
    async () => {
      const p = 25172;
      const h = 25173;
      const base = `http://127.0.0.1:${h}`;
      assertFree(p);
      assertFree(h);
      const server = stock(["-s", "-1", "-p", String(p)]);
      try {
        await waitListening(p);
        const client = oursMain(["-c", "127.0.0.1", "-p", String(p), "-b", "100M", "-t", "2", "-J", "--http", `127.0.0.1:${h}`], 30_000);
        await waitHttp(`${base}/status`);
        // The endpoint outlives the test by a few seconds, so the results can be fetched after the report.
        while (!client.stdout().includes('"end"')) await sleep(50);
        await sleep(200);
        const doc = (await getJson(`${base}/results`)).body as ResultsDoc;
        expect([doc.mode, doc.role, doc.transport, doc.peer]).toEqual(["iperf3", "client", "tcp", `127.0.0.1:${p}`]);
        const report = JSON.parse(client.stdout().slice(0, client.stdout().lastIndexOf("}") + 1)) as { end: { sum_sent: { bytes: number } } };
        expect(disagreement(doc.summary.bytes, report.end.sum_sent.bytes)).toBeLessThan(0.02);
        client.kill();
        await client.done;
      } finally {
        server.kill();
        await server.done;
      }
    },
    40_000,
  );
});
