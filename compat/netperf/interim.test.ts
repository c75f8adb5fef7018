import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InterimClock, interimText, interimUnits } from "./interim.ts";
import type { OutputMode } from "./plan.ts";

/** Interim lines printed by stock netperf 2.7.0 with -D in each output style, rebuilt from their own numbers. */
const FIXTURE = readFileSync(join(import.meta.dir, "../../tests/fixtures/netperf/stock-demo.txt"), "utf8");

const LIBFMT: Record<string, string> = { "10^6bits/s": "m", "Trans/s": "x", "KBytes/s": "K" };
const DIVISOR: Record<string, number> = { m: 125_000, x: 1, K: 1024 };

interface Parsed {
  mode: OutputMode;
  text: string;
  rate: number;
  units: string;
  intervalS: number;
  ending: string;
  index: number;
}

function interimLines(): Parsed[] {
  const out: Parsed[] = [];
  const lines = FIXTURE.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    let m = /^Interim result: +([\d.]+) (\S+) over ([\d.]+) seconds ending at ([\d.]+)$/.exec(l);
    if (m) out.push({ mode: "legacy", text: `${l}\n`, rate: Number(m[1]), units: m[2]!, intervalS: Number(m[3]), ending: m[4]!, index: 0 });
    m = /^ *([\d.]+),([^,]+),([\d.]+),([\d.]+)$/.exec(l);
    if (m) out.push({ mode: "csv", text: `${l}\n`, rate: Number(m[1]), units: m[2]!, intervalS: Number(m[3]), ending: m[4]!, index: 0 });
    m = /^NETPERF_INTERIM_RESULT\[(\d+)\]=([\d.]+)$/.exec(l);
    if (m) {
      const block = lines.slice(i, i + 4);
      const units = block[1]!.split("=")[1]!;
      const intervalS = Number(block[2]!.split("=")[1]);
      out.push({ mode: "keyval", text: `${block.join("\n")}\n`, rate: Number(m[2]), units, intervalS, ending: block[3]!.split("=")[1]!, index: Number(m[1]) });
    }
  }
  return out;
}

test("the fixture has interim lines in all three styles", () => {
  const modes = new Set(interimLines().map((p) => p.mode));
  expect([...modes].sort()).toEqual(["csv", "keyval", "legacy"]);
  expect(interimLines().length).toBe(14);
});

test("every stock interim line comes out byte for byte from its rate, interval and time", () => {
  for (const p of interimLines()) {
    const libfmt = LIBFMT[p.units]!;
    // netperf divides the interval's units by the interval: invert that to get the units it counted.
    const units = p.rate * p.intervalS * DIVISOR[libfmt]!;
    const [sec, ms] = p.ending.split(".");
    const text = interimText(p.mode, libfmt, { index: p.index, units, intervalS: p.intervalS, endingMs: Number(sec) * 1000 + Number(ms) });
    expect(text).toBe(p.text);
  }
});

test("the wall-clock milliseconds keep their leading zeros", () => {
  expect(interimText("csv", "x", { index: 0, units: 100, intervalS: 1, endingMs: 1_796_211_253_007.9 })).toBe(" 100.00,Trans/s,1.000,1796211253.007\n");
});

test("what a tick counts: transactions, or request+response bytes with a byte unit, or stream bytes", () => {
  const c = { bytes: 5000, transactions: 40 };
  expect(interimUnits("TCP_RR", "x", c, 32, 1024)).toBe(40);
  expect(interimUnits("UDP_RR", "m", c, 32, 1024)).toBe(40 * 1056);
  expect(interimUnits("TCP_MAERTS", "m", c, 1, 1)).toBe(5000);
  expect(interimUnits("UDP_STREAM", "K", c, 1, 1)).toBe(5000);
});

test("the clock: intervals between lines, nothing for an idle interval, numbering across -i rounds", () => {
  const clock = new InterimClock(1000);
  expect(clock.tick(100, 1500, 9_000)).toEqual({ index: 0, units: 100, intervalS: 0.5, endingMs: 9_000 });
  // No transaction completed: no line, and the next one covers both intervals.
  expect(clock.tick(100, 2000, 9_500)).toBeUndefined();
  expect(clock.tick(160, 2500, 10_000)).toEqual({ index: 1, units: 60, intervalS: 1, endingMs: 10_000 });
  clock.restart(5000);
  expect(clock.tick(30, 5200, 12_000)).toEqual({ index: 2, units: 30, intervalS: 0.2, endingMs: 12_000 });
});
