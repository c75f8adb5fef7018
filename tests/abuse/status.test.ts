/**
 * Live abuse against the --http status endpoint during a real loopback run (`anyperf loopback --http`, from source
 * through main.ts): 200 slowloris connections dribbling headers, 1000 bogus connects with garbage, idle
 * connections, a 1 MiB header line and an absurd Content-Length, and /events subscribers killed mid-stream. A poller
 * must keep getting valid /status documents within a deadline throughout, the run must finish with sane figures,
 * and the endpoint must still answer afterwards. Port 22500.
 */
import { expect, test } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import { StatusDocument } from "../../src/status/schema.ts";
import { listenerPid } from "../interop/netperf-harness.ts";
import { bogusConnects, exchange, idleConnections, rssBoundKiB, rssKiB, sleep, slowloris, stackTraceLines } from "./abusers.ts";

const PORT = 22500;
const BASE = `http://127.0.0.1:${PORT}`;
const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const DEADLINE_MS = 1000;

interface PollReport {
  ok: number;
  failures: string[];
  slowestMs: number;
}

/**
 * GET /status every 100 ms until `stop`, each with a deadline; every answer must be a valid document. Polling ends
 * early, with no failure, when the endpoint refuses connections after a document said "done": the run ended and its
 * endpoint closed after lingering, in the moment before the process exits.
 */
async function poll(stop: AbortSignal): Promise<PollReport> {
  const r: PollReport = { ok: 0, failures: [], slowestMs: 0 };
  let lastPhase = "";
  while (!stop.aborted) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${BASE}/status`, { signal: AbortSignal.timeout(DEADLINE_MS) });
      lastPhase = StatusDocument.parse(await res.json()).phase;
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      r.ok++;
    } catch (e) {
      const err = e as Error & { code?: string };
      if (lastPhase === "done" && /ConnectionRefused|ECONNREFUSED/.test(`${err.code} ${err.name} ${err.message}`)) break;
      r.failures.push(`${err.name}: ${err.message}`);
    }
    r.slowestMs = Math.max(r.slowestMs, performance.now() - t0);
    await sleep(100);
  }
  return r;
}

/** Subscribes to /events, reads until the first event arrives, then vanishes without a goodbye (RST). */
function killedSubscriber(): Promise<boolean> {
  return new Promise((resolve) => {
    let got = "";
    const s = connect({ host: "127.0.0.1", port: PORT }, () => s.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${PORT}\r\nAccept: text/event-stream\r\n\r\n`));
    s.on("data", (d) => {
      got += d.toString();
      if (got.includes("data: ")) {
        s.resetAndDestroy();
        resolve(true);
      }
    });
    s.on("error", () => {});
    setTimeout(() => (s.destroy(), resolve(false)), 5000);
  });
}

test(
  "/status keeps answering within 1 s under slowloris, 1000 bogus connects and killed subscribers; the run and the endpoint survive",
  async () => {
    expect(listenerPid(PORT)).toBeUndefined();
    const p = Bun.spawn([process.execPath, MAIN, "loopback", "-t", "8", "-P", "2", "--json", "--http", `127.0.0.1:${PORT}`], { stdout: "pipe", stderr: "pipe" });
    const out = Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    const stop = new AbortController();
    try {
      const end = Date.now() + 8000;
      while (listenerPid(PORT) === undefined) {
        if (Date.now() > end) throw new Error("the status endpoint did not come up");
        await sleep(50);
      }
      const rss0 = rssKiB(p.pid);
      const polling = poll(stop.signal);
      const loris = slowloris(PORT, 200, 100);
      const idle = idleConnections(PORT, 50);
      const flood = bogusConnects(PORT, { total: 1000, concurrency: 100 });
      const bigHeader = exchange(PORT, new TextEncoder().encode(`GET /status HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(1 << 20)}\r\n\r\n`), 5000);
      const bigBody = exchange(PORT, new TextEncoder().encode(`POST /status HTTP/1.1\r\nHost: x\r\nContent-Length: 4611686018427387904\r\n\r\nabc`), 5000);
      const subscribers = await Promise.all(Array.from({ length: 10 }, killedSubscriber));
      expect(subscribers.filter(Boolean).length).toBe(10);
      expect((await flood).connected).toBeGreaterThan(900);
      // Each oversized request gets an HTTP error answer or a close, never a hang.
      for (const x of [await bigHeader, await bigBody]) expect(x.closed || /^HTTP\/1\.1 [45]\d\d/.test(new TextDecoder().decode(x.reply))).toBe(true);
      await sleep(1000);
      expect(loris.opened()).toBe(200);
      expect(idle.opened()).toBe(50);
      expect(rssKiB(p.pid)).toBeLessThan(rssBoundKiB(rss0));

      const code = await p.exited;
      stop.abort();
      const report = await polling;
      await loris.stop();
      await idle.stop();
      expect(report.failures).toEqual([]);
      expect(report.ok).toBeGreaterThan(20);
      expect(code).toBe(0);
      const [stdout, stderr] = await out;
      const doc = JSON.parse(stdout) as { summary: { bytes: number; throughput_bps: number }; phases: { measured_s: number } };
      expect(doc.phases.measured_s).toBeGreaterThan(7.5);
      expect(doc.summary.throughput_bps).toBeGreaterThan(500e6);
      expect(stackTraceLines(stdout + stderr)).toEqual([]);
    } finally {
      stop.abort();
      p.kill();
    }
  },
  40_000,
);

test("after the abuse, the port is free again and a fresh run's endpoint answers", async () => {
  // The run above lingered 5 s for /results and then closed the port; a new one binds it again.
  const p = Bun.spawn([process.execPath, MAIN, "loopback", "-t", "1", "-P", "1", "--json", "--http", `127.0.0.1:${PORT}`], { stdout: "pipe", stderr: "pipe" });
  try {
    const end = Date.now() + 8000;
    let doc: StatusDocument | undefined;
    while (!doc && Date.now() < end) {
      try {
        doc = StatusDocument.parse(await (await fetch(`${BASE}/status`, { signal: AbortSignal.timeout(DEADLINE_MS) })).json());
      } catch {
        await sleep(50);
      }
    }
    expect(doc).toBeDefined();
    expect(await p.exited).toBe(0);
  } finally {
    p.kill();
  }
}, 20_000);
