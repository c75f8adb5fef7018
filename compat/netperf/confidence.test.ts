import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfidenceTracker, confidenceWarning, tQuantile } from "./confidence.ts";
import { sprintf } from "./printf.ts";

/**
 * Stock netperf 2.7.0 runs with -d: each round's inputs to its statistics, the widths it logged after each round,
 * how many rounds it ran, and what it printed. The tracker, fed the same inputs, must decide and print the same.
 */
const FIXTURE = readFileSync(join(import.meta.dir, "../../tests/fixtures/netperf/stock-confidence.txt"), "utf8");

interface Run {
  command: string;
  rounds: { res: number; lcpu: number; rcpu: number }[];
  logged: string[];
  keyvals: Record<string, string>;
  warning: string | undefined;
}

function runs(): Run[] {
  return FIXTURE.split(/^(?=# netperf)/m).map((block) => {
    const lines = block.split("\n");
    const rounds: Run["rounds"] = [];
    for (let i = 0; i < lines.length; i++) {
      const m = /^calculate_confidence: itr +\d+; time [\d.]+; res +([\d.]+)$/.exec(lines[i]!);
      if (!m) continue;
      const cpu = /lcpu (-?[\d.]+); rcpu (-?[\d.]+)/.exec(lines[i + 1]!)!;
      rounds.push({ res: Number(m[1]), lcpu: Number(cpu[1]), rcpu: Number(cpu[2]) });
    }
    const keyvals: Record<string, string> = {};
    for (const l of lines) {
      const kv = /^([A-Z_]+)=(.*)$/.exec(l);
      if (kv) keyvals[kv[1]!] = kv[2]!;
    }
    const w = block.indexOf("!!! WARNING");
    return {
      command: lines[0]!,
      rounds,
      logged: lines.filter((l) => l.startsWith("Conf_itvl")),
      keyvals,
      warning: w < 0 ? undefined : block.slice(w, block.indexOf("\n\n", w) + 2),
    };
  });
}

test("the fixture holds three runs", () => {
  expect(runs().map((r) => r.rounds.length)).toEqual([5, 10, 3]);
});

for (const run of runs()) {
  test(`same rounds, widths and verdict as stock: ${run.command.slice(2, 90)}`, () => {
    const [, max, min] = /-i (\d+),(\d+)/.exec(run.command)!.map(Number);
    const [, level, width] = /-I (\d+),(\d+)/.exec(run.command)!.map(Number);
    const t = new ConfidenceTracker(level!, width! / 100, false);
    const logged: string[] = [];
    let ran = 0;
    for (const r of run.rounds) {
      t.add({ elapsed: 1, thruput: r.res, localCpuUtil: r.lcpu, remoteCpuUtil: r.rcpu });
      ran++;
      if (t.rounds > 1) {
        const w = t.widthsPct();
        logged.push(sprintf("Conf_itvl %2d: results:%4.1f%% loc_cpu:%4.1f%% rem_cpu:%4.1f%%", t.rounds, w.result, w.localCpu, w.remoteCpu));
      }
      if (!t.wantsAnother(min!, max!)) break;
    }
    // Stock stopped after exactly the rounds it logged; so must we.
    expect(ran).toBe(run.rounds.length);
    expect(t.wantsAnother(min!, max!)).toBe(false);
    expect(logged).toEqual(run.logged);
    if (run.keyvals.THROUGHPUT_CONFID) expect(sprintf("%.3f", t.widthsPct().result)).toBe(run.keyvals.THROUGHPUT_CONFID);
    if (run.keyvals.LOCAL_CPU_CONFID) expect(sprintf("%.3f", t.widthsPct().localCpu)).toBe(run.keyvals.LOCAL_CPU_CONFID);
    expect(t.missed).toBe(run.warning !== undefined || (run.keyvals.THROUGHPUT_CONFID !== undefined && Number(run.keyvals.THROUGHPUT_CONFID) > width!));
    if (run.warning) expect(confidenceWarning(t.widthsPct())).toBe(run.warning);
  });
}

test("t quantiles: netperf's table ends at 30 degrees of freedom and knows only 95 and 99 %", () => {
  expect(tQuantile(95, 1)).toBe(12.706);
  expect(tQuantile(99, 29)).toBe(2.756);
  expect(tQuantile(90, 5)).toBe(0);
});

test("-r: only the result counts, however wide the CPU interval", () => {
  const rounds = [
    { thruput: 100, cpu: 10 },
    { thruput: 100.1, cpu: 90 },
    { thruput: 99.9, cpu: 50 },
  ];
  const all = new ConfidenceTracker(99, 0.05, false);
  const resultOnly = new ConfidenceTracker(99, 0.05, true);
  for (const r of rounds) {
    for (const t of [all, resultOnly]) t.add({ elapsed: 1, thruput: r.thruput, localCpuUtil: r.cpu, remoteCpuUtil: -1 });
  }
  expect(all.missed).toBe(true);
  expect(resultOnly.missed).toBe(false);
  expect(resultOnly.wantsAnother(3, 10)).toBe(false);
  expect(all.wantsAnother(3, 10)).toBe(true);
});
