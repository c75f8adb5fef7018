/**
 * deploy/grafana/anyperf.json: the dashboard takes its Prometheus as a variable (no data source id baked in), every
 * query is valid PromQL (promtool parses it as a rule), and every metric a query names is one a live anyperf exposes:
 * scraped from a real `anyperf serve --http` during a TCP, a UDP and a request/response test, and from the RR
 * client's own endpoint (only a client times transactions, so the latency histogram lives there).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { freePorts, hasTool, sleep, spawnProc, waitBound, type Proc } from "../support/processes.ts";

const ROOT = join(import.meta.dir, "../..");
const MAIN = join(ROOT, "main.ts");
const DATASOURCE = { type: "prometheus", uid: "${datasource}" };

const Target = z.looseObject({ expr: z.string().min(1), refId: z.string(), datasource: z.unknown() });
const Panel = z.looseObject({ title: z.string().min(1), type: z.string(), datasource: z.unknown(), targets: z.array(Target).min(1) });
const Dashboard = z.looseObject({
  title: z.string(),
  uid: z.string(),
  panels: z.array(Panel).min(1),
  templating: z.object({ list: z.array(z.looseObject({ name: z.string(), type: z.string(), query: z.unknown() })) }),
});
const dashboard = Dashboard.parse(JSON.parse(readFileSync(join(ROOT, "deploy/grafana/anyperf.json"), "utf8")));
const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
/** The metric names a query reads: anyperf's own prefix (recorded rules would be `anyperf:...`, which is not one). */
const namesIn = (expr: string) => [...expr.matchAll(/\b(anyperf[a-z_:]*)/g)].map((m) => m[1]!);

const dir = mkdtempSync(join(tmpdir(), "anyperf-grafana-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("deploy/grafana/anyperf.json", () => {
  test("the data source is a variable: every panel and query reads ${datasource}, a Prometheus picked on import", () => {
    const ds = dashboard.templating.list.find((v) => v.name === "datasource");
    expect(ds).toMatchObject({ type: "datasource", query: "prometheus" });
    for (const p of dashboard.panels) {
      expect(p.datasource).toEqual(DATASOURCE);
      for (const t of p.targets) expect(t.datasource).toEqual(DATASOURCE);
    }
    // No other data source uid anywhere (an exported dashboard carries its Grafana's ids).
    const uids = [...readFileSync(join(ROOT, "deploy/grafana/anyperf.json"), "utf8").matchAll(/"uid": "([^"]*)"/g)].map((m) => m[1]);
    expect(new Set(uids)).toEqual(new Set([dashboard.uid, "${datasource}"]));
    expect(dashboard.panels.map((p) => p.title)).toEqual(
      expect.arrayContaining(["Throughput per node pair (receiving node <- peer)", "Latency heatmap (request/response)", "CPU busy", "TCP retransmits", "Tests running"]),
    );
  });

  test.skipIf(!hasTool(["promtool", "--version"], /promtool/))("every query is valid PromQL (promtool parses each as a recording rule)", () => {
    const rules = exprs.map((e, i) => `      - record: dashboard:query_${i}\n        expr: '${e.expr.replaceAll("$__rate_interval", "1m").replaceAll("$node", ".*").replaceAll("'", "''")}'`);
    writeFileSync(join(dir, "queries.yml"), ["groups:", "  - name: dashboard", "    rules:", ...rules, ""].join("\n"));
    const r = Bun.spawnSync(["promtool", "check", "rules", join(dir, "queries.yml")], { stdout: "pipe", stderr: "pipe" });
    expect(r.stdout.toString() + r.stderr.toString()).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.exitCode).toBe(0);
    // A misspelt query fails there (so the pass means something).
    writeFileSync(join(dir, "bad.yml"), "groups:\n  - name: x\n    rules:\n      - record: x:y\n        expr: 'sum by (le (anyperf_latency_seconds_bucket)'\n");
    expect(Bun.spawnSync(["promtool", "check", "rules", join(dir, "bad.yml")], { stdout: "pipe", stderr: "pipe" }).exitCode).not.toBe(0);
  });

  test("every metric a query names is on a live serve's or client's /metrics", async () => {
    const native = freePorts(41300, 41400, 3);
    const [serveHttp, clientHttp] = [native + 1, native + 2];
    const serve = spawnProc([process.execPath, MAIN, "serve", "-p", String(native), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off", "--http", `127.0.0.1:${serveHttp}`, "--label", "node=n1"], 90_000);
    const scraped = new Set<string>();
    const scrape = async (port: number) => {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()).catch(() => "");
      for (const line of text.split("\n")) if (line !== "" && !line.startsWith("#")) scraped.add(line.slice(0, line.search(/[{ ]/)));
    };
    const during = async (client: Proc, ports: number[]) => {
      while ((await Promise.race([client.done.then(() => true), sleep(300).then(() => false)])) === false) for (const p of ports) await scrape(p);
      const done = await client.done;
      expect(done.code, done.stderr).toBe(0);
    };
    try {
      await waitBound(native, "tcp", 30_000);
      await waitBound(serveHttp, "tcp", 30_000);
      const client = (args: string[]) => spawnProc([process.execPath, MAIN, "client", "127.0.0.1", "-p", String(native), ...args], 60_000);
      await during(client(["-t", "2"]), [serveHttp]);
      await during(client(["-t", "2", "-u", "-b", "20M"]), [serveHttp]);
      await during(client(["-t", "3", "--rr", "1,1", "--http", `127.0.0.1:${clientHttp}`, "--linger", "0"]), [serveHttp, clientHttp]);
    } finally {
      serve.kill("SIGINT");
      await serve.done;
    }
    const missing = exprs.flatMap((e) => namesIn(e.expr).filter((n) => !scraped.has(n)).map((n) => `${e.panel}: ${n}`));
    expect(missing).toEqual([]);
    expect(exprs.every((e) => namesIn(e.expr).length > 0)).toBe(true);
  }, 120_000);
});
