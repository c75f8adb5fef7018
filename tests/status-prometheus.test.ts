import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStatusServer } from "../src/status/server.ts";
import { fakeSource } from "./fixtures/status/fake-run.ts";
import { VERSION } from "../src/version.ts";

/**
 * A real Prometheus (Debian `prometheus`) scrapes a status server with its Bearer token, and the figure is read
 * back through Prometheus's HTTP API: proves the exposition parses in the real scraper, not only in promtool.
 */

const prometheus = Bun.which("prometheus");
if (!prometheus) console.warn("status-prometheus: SKIPPED, prometheus not found: apt-get install prometheus");
const PROM_PORT = 29090;
const TOKEN = "prom-scrape-token";
const dir = mkdtempSync(join(tmpdir(), "anyperf-prom-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface QueryAnswer {
  status: string;
  data: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

async function query(q: string): Promise<QueryAnswer["data"]["result"]> {
  const url = `http://127.0.0.1:${PROM_PORT}/api/v1/query?query=${encodeURIComponent(q)}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  const body = (await res.json()) as QueryAnswer;
  return body.status === "success" ? body.data.result : [];
}

test.skipIf(!prometheus)(
  "Prometheus scrapes /metrics and serves the figures back",
  async () => {
    const { source, run } = fakeSource({ intervals: 30, mode: "iperf3", role: "client", rr: true });
    for (let i = 0; i < 3; i++) run.step();
    const status = startStatusServer({ host: "127.0.0.1", port: 0, token: TOKEN }, source);
    const config = join(dir, "prometheus.yml");
    writeFileSync(
      config,
      [
        "global:",
        "  scrape_interval: 1s",
        "  scrape_timeout: 1s",
        "scrape_configs:",
        "  - job_name: anyperf",
        "    authorization:",
        `      credentials: ${TOKEN}`,
        "    static_configs:",
        `      - targets: ["127.0.0.1:${status.port}"]`,
        "",
      ].join("\n"),
    );
    const log = join(dir, "prometheus.log");
    const proc = Bun.spawn(
      [
        prometheus!,
        `--config.file=${config}`,
        `--web.listen-address=127.0.0.1:${PROM_PORT}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
      ],
      { stdout: Bun.file(log), stderr: Bun.file(log) },
    );
    try {
      const want = run.view("measuring").streams[0]!.bytes;
      let got: QueryAnswer["data"]["result"] = [];
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline) {
        got = await query('anyperf_bytes_total{stream="0"}').catch(() => []);
        if (got.length) break;
        await Bun.sleep(250);
      }
      if (!got.length) throw new Error(`no sample scraped in 45 s; prometheus log:\n${readFileSync(log, "utf8").slice(-3000)}`);
      expect(got).toHaveLength(1);
      expect(got[0]!.metric).toEqual({ __name__: "anyperf_bytes_total", instance: `127.0.0.1:${status.port}`, job: "anyperf", dialect: "iperf3", role: "client", test: "t1", peer: "127.0.0.1", stream: "0" });
      expect(Number(got[0]!.value[1])).toBe(want);
      const phase = await query('anyperf_test_phase{phase="measuring"}');
      expect(Number(phase[0]!.value[1])).toBe(1);
      // The latency histogram as Prometheus reads it: fakeBuckets puts none under 10 µs and 80 % under 20 µs, so the
      // median interpolates to 10 + 10 x 0.5/0.8 µs.
      const p50 = await query("histogram_quantile(0.5, sum by (le) (anyperf_latency_seconds_bucket))");
      expect(Number(p50[0]!.value[1])).toBeCloseTo(16.25e-6, 12);
      const build = await query("anyperf_build_info");
      expect(build[0]!.metric.version).toBe(VERSION);
      const up = await query('up{job="anyperf"}');
      expect(Number(up[0]!.value[1])).toBe(1);
    } finally {
      proc.kill();
      await proc.exited;
      await status.stop();
    }
  },
  60_000,
);
