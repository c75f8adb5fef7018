/**
 * Issue 18 "Done when": a real Prometheus (Debian `prometheus`) scrapes three `anyperf serve --label node=nK`, three
 * clients started together with --start-at each test one serve, and PromQL over Prometheus' HTTP API returns the
 * fleet total equal to the sum of the clients' own --json reports within 2 %. Loopback; ports 41500-41999 (free ones
 * picked: the range is ephemeral too). Runs the built binary (./scripts/build).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { freePorts, sleep, spawnProc, type Proc } from "../support/processes.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "dist", "anyperf");
const RULES = join(ROOT, "deploy", "prometheus", "anyperf.rules.yml");
const PROMETHEUS = Bun.which("prometheus");
const skipReason = !PROMETHEUS ? "prometheus not found: apt-get install prometheus" : !existsSync(BIN) ? "dist/anyperf missing: run ./scripts/build" : "";
if (skipReason) console.warn(`prometheus-fleet: SKIPPED, ${skipReason}`);

const NODES = ["n1", "n2", "n3"];
const dir = mkdtempSync(join(tmpdir(), "anyperf-fleet-prom-"));
const procs: Proc[] = [];

afterAll(async () => {
  for (const p of procs) p.kill("SIGINT");
  // Bounded: a process that ignores SIGINT is killed outright.
  const late = setTimeout(() => procs.forEach((p) => p.kill("SIGKILL")), 10_000);
  await Promise.all(procs.map((p) => p.done));
  clearTimeout(late);
  rmSync(dir, { recursive: true, force: true });
});

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(port: number, q: string): Promise<Sample[]> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(3000) });
    const body = (await res.json()) as { status: string; data: { result: Sample[] } };
    return body.status === "success" ? body.data.result : [];
  } catch {
    return []; // not up yet, or busy on a loaded host: the caller polls
  }
}

/** Polls `check` until it returns a value, at most `ms`; `what` names the wait in the error. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await check();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms; prometheus log:\n${readFileSync(join(dir, "prometheus.log"), "utf8").slice(-2000)}`);
    await sleep(250);
  }
}

/** Per-node values of a query, when it answers exactly one series for each node. */
function byNode(samples: Sample[]): Map<string, number> | undefined {
  const m = new Map(samples.map((s) => [s.metric.node ?? "", Number(s.value[1])]));
  return NODES.every((n) => m.has(n)) && m.size === NODES.length ? m : undefined;
}

test.skipIf(skipReason !== "")(
  "Prometheus sums three serves' bytes to the clients' own totals within 2 %",
  async () => {
    // Three native ports, three status ports, Prometheus.
    const base = freePorts(41500, 42000, 7);
    const native = NODES.map((_, k) => base + k);
    const http = NODES.map((_, k) => base + 3 + k);
    const promPort = base + 6;

    NODES.forEach((node, k) => {
      const argv = [BIN, "serve", "-B", "127.0.0.1", "-p", `${native[k]}`, "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"];
      procs.push(spawnProc([...argv, "--label", `node=${node}`, "--http", `127.0.0.1:${http[k]}`], 170_000));
    });
    for (const port of http) {
      await until(`/readyz on ${port}`, 20_000, async () => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      });
    }

    const config = join(dir, "prometheus.yml");
    // JSON is YAML: the config as data, not as indented lines.
    const targets = http.map((p) => `127.0.0.1:${p}`);
    writeFileSync(
      config,
      JSON.stringify({
        global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
        rule_files: [RULES],
        scrape_configs: [{ job_name: "anyperf", static_configs: [{ targets }] }],
      }),
    );
    const prom = spawnProc(
      [PROMETHEUS!, `--config.file=${config}`, `--web.listen-address=127.0.0.1:${promPort}`, `--storage.tsdb.path=${join(dir, "data")}`],
      170_000,
    );
    procs.push(prom);
    // spawnProc collects Prometheus' log in memory; the wait errors read it from this file.
    const saveLog = () => writeFileSync(join(dir, "prometheus.log"), prom.stderr());
    const fleet = `sum by (node) (anyperf_process_bytes_total{job="anyperf",role="server"})`;

    // Every serve scraped, with its own node label and nothing moved yet: the fleet starts from zero.
    const before = await until("three idle serves scraped", 60_000, async () => {
      saveLog();
      return byNode(await query(promPort, fleet));
    });
    expect([...before.values()]).toEqual([0, 0, 0]);

    // Launched together, started together: T leaves room for three processes to start on a loaded 2-core host.
    const at = new Date(Math.ceil((Date.now() + 5000) / 1000) * 1000).toISOString();
    const clients = native.map((port) => spawnProc([BIN, "client", "127.0.0.1", "-p", `${port}`, "--start-at", at, "-t", "4", "--json"], 60_000));
    const outs = await Promise.all(clients.map((c) => c.done));
    for (const o of outs) expect(o.code, o.stderr).toBe(0);
    const reports = outs.map((o) => Results.parse(JSON.parse(o.stdout)));
    const starts = reports.map((r) => Date.parse(r.started_at));
    expect(Math.max(...starts) - Math.min(...starts)).toBeLessThan(1000);
    const own = reports.map((r) => r.totals.sent_bytes ?? 0);
    for (const b of own) expect(b).toBeGreaterThan(0);
    const clientsSum = own.reduce((a, b) => a + b, 0);

    // The counters are cumulative: once two scrapes after the runs agree, the last value is the fleet's total.
    let last = -1;
    const perNode = await until("fleet total settled after the runs", 30_000, async () => {
      saveLog();
      const m = byNode(await query(promPort, fleet));
      const sum = m ? [...m.values()].reduce((a, b) => a + b, 0) : -1;
      const settled = sum > 0 && sum === last;
      last = sum;
      if (!settled) await sleep(1200);
      return settled ? m : undefined;
    });
    const [total] = await query(promPort, `sum(anyperf_process_bytes_total{job="anyperf",role="server"})`);
    const fleetTotal = Number(total!.value[1]);
    expect(Math.abs(fleetTotal - clientsSum) / clientsSum).toBeLessThan(0.02);
    // Each node's figure is its own client's, not a lucky sum: client k tested the serve labelled nodes[k].
    NODES.forEach((node, k) => expect(Math.abs(perNode.get(node)! - own[k]!) / own[k]!).toBeLessThan(0.02));

    // The shipped recording rules ran on these series: one rate per node, and a fleet rate that is their sum.
    const rule = await until("recording rules evaluated", 20_000, async () => byNode(await query(promPort, "node:anyperf_bytes_per_second:rate1m")));
    for (const v of rule.values()) expect(v).toBeGreaterThan(0);
    const [fleetRate] = await query(promPort, "anyperf:fleet_bytes_per_second:rate1m");
    expect(Number(fleetRate!.value[1])).toBeGreaterThan(0);
  },
  180_000,
);
