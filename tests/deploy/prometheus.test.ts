/**
 * deploy/prometheus: promtool unit-tests the fleet rules (deploy/prometheus/anyperf.rules.test.yml), checks the plain
 * config, and runs the pair rule on series scraped from a real `anyperf serve --http` after a real client test, so
 * the rules' metric and label names are the ones /metrics actually has.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, hasTool, spawnProc, waitBound } from "../support/processes.ts";

const ROOT = join(import.meta.dir, "../..");
const PROM = join(ROOT, "deploy/prometheus");
const BIN = join(ROOT, "dist/anyperf");
const HAVE_PROMTOOL = hasTool(["promtool", "--version"], /promtool/);
if (!HAVE_PROMTOOL) console.warn("promtool tests skipped: promtool missing (scripts/install-peers)");

// Free ports picked at run time: the range is also the kernel's ephemeral one.
const NATIVE = freePorts(41030, 41060, 2);
const HTTP = NATIVE + 1;

function promtool(args: string[], cwd: string) {
  const r = Bun.spawnSync(["promtool", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

describe.skipIf(!HAVE_PROMTOOL)("deploy/prometheus", () => {
  test("promtool: the recording and alert rules pass their unit tests", () => {
    const r = promtool(["test", "rules", "anyperf.rules.test.yml"], PROM);
    expect(r.out).toContain("SUCCESS");
    expect(r.code).toBe(0);
  });

  test("promtool: the unit tests fail when a rule changes (the alert's fraction)", () => {
    const dir = mkdtempSync(join(tmpdir(), "anyperf-rules-"));
    try {
      copyFileSync(join(PROM, "anyperf.rules.test.yml"), join(dir, "anyperf.rules.test.yml"));
      writeFileSync(join(dir, "anyperf.rules.yml"), readFileSync(join(PROM, "anyperf.rules.yml"), "utf8").replace("(0.5 *", "(0.3 *"));
      const r = promtool(["test", "rules", "anyperf.rules.test.yml"], dir);
      expect(r.code).not.toBe(0);
      expect(r.out).toContain("AnyperfNodePairSlow");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("promtool: the plain prometheus.yml and its rules file check clean", () => {
    const dir = mkdtempSync(join(tmpdir(), "anyperf-promcfg-"));
    try {
      // credentials_file must exist for the check; the shipped path is /etc/prometheus/anyperf-token.
      writeFileSync(join(dir, "token"), "t0ken\n");
      writeFileSync(join(dir, "prometheus.yml"), readFileSync(join(PROM, "prometheus.yml"), "utf8").replaceAll("/etc/prometheus/anyperf-token", join(dir, "token")));
      copyFileSync(join(PROM, "anyperf.rules.yml"), join(dir, "anyperf.rules.yml"));
      const r = promtool(["check", "config", "prometheus.yml"], dir);
      expect(r.out).toContain("SUCCESS: 5 rules found");
      expect(r.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.skipIf(!existsSync(BIN))("the pair rule on a real serve's /metrics after a real client test: one pair, the server's own average", async () => {
    const serve = spawnProc([BIN, "serve", "-p", String(NATIVE), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off", "--http", `127.0.0.1:${HTTP}`], 60_000);
    const dir = mkdtempSync(join(tmpdir(), "anyperf-live-rules-"));
    try {
      await waitBound(NATIVE);
      await waitBound(HTTP);
      const client = await spawnProc([BIN, "client", "127.0.0.1", "-p", String(NATIVE), "-t", "1"], 30_000).done;
      expect(client.code).toBe(0);
      const text = await (await fetch(`http://127.0.0.1:${HTTP}/metrics`)).text();
      const wanted = /^(anyperf_average_throughput_bytes_per_second|anyperf_process_bytes_total)\{(.*)\} (\S+)$/;
      const lines = text.split("\n").filter((l) => wanted.test(l));
      // The average, and the process's bytes in each direction (sent, received, both).
      expect(lines).toHaveLength(4);
      const avg = lines.map((l) => l.match(wanted)!).find((m) => m[1] === "anyperf_average_throughput_bytes_per_second")!;
      expect(avg[2]).toContain('role="server"');
      expect(avg[2]).toContain('peer="127.0.0.1"');
      // The scraped series as promtool input, with the node label a scrape adds; the rule must find one pair.
      const series = lines.map((l) => {
        const m = l.match(wanted)!;
        return `      - series: '${m[1]}{${m[2]},node="n1"}'\n        values: '${m[3]}x20'`;
      });
      writeFileSync(
        join(dir, "live.test.yml"),
        [
          "rule_files: [anyperf.rules.yml]",
          "evaluation_interval: 5s",
          "tests:",
          "  - interval: 5s",
          "    input_series:",
          ...series,
          "    promql_expr_test:",
          "      - expr: anyperf:pair_average_bytes_per_second",
          "        eval_time: 1m",
          "        exp_samples:",
          `          - labels: 'anyperf:pair_average_bytes_per_second{node="n1",peer_address="127.0.0.1"}'`,
          `            value: ${avg[3]}`,
          "",
        ].join("\n"),
      );
      copyFileSync(join(PROM, "anyperf.rules.yml"), join(dir, "anyperf.rules.yml"));
      const r = promtool(["test", "rules", "live.test.yml"], dir);
      expect(r.out).toContain("SUCCESS");
      expect(r.code).toBe(0);
    } finally {
      serve.kill("SIGINT");
      await serve.done;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
