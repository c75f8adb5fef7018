/**
 * Issue 21 item 8, -O N: the interval labels, their "(omitted)" markers and the -J `omitted` flags and start/end
 * times, in both roles against stock iperf3 3.12 (stock client → `anyperf iperf3 -s`, `anyperf iperf3 -c` → stock
 * server). The reference is what 3.12 prints for `-t 3 -O 2`: its own runs race now and then (an omitted interval
 * lost, or "1.00-1.00"), so neither a live stock-to-stock run nor the stock peer's own output is one; only ours is
 * checked against it. Times agree within timer jitter. Ports picked free
 * in 17100-17199.
 */
import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { hasStockIperf3, json, ours, stock, waitListening, type Finished, type Proc } from "./iperf3-harness.ts";

const HAVE = hasStockIperf3();
const T = 60_000;
const ARGS = ["-t", "3", "-O", "2", "-b", "100M"];

/** 3.12's intervals for -t 3 -O 2 (omitted seconds restart at 0.00), then its summary lines. */
const INTERVALS = [
  { start: 0, end: 1, omitted: true },
  { start: 1, end: 2, omitted: true },
  { start: 0, end: 1, omitted: false },
  { start: 1, end: 2, omitted: false },
  { start: 2, end: 3, omitted: false },
];
const JITTER_S = 0.1;
/** How late the end may come on a loaded host (a TEST_END the scheduler held back). */
const LATE_END_S = 0.5;

interface Label {
  start: number;
  end: number;
  word: string;
}

/** The "[  5]   0.00-1.00   sec ... (omitted)" lines of a text run: times and the closing word. */
function labels(out: string): Label[] {
  return out.split("\n").filter((l) => /^\[ *\d+\]\s+\d+\.\d+-\d+\.\d+\s+sec/.test(l)).map((l) => {
    const m = /\]\s+(\d+\.\d+)-(\d+\.\d+)\s+sec.*?(\(omitted\)|sender|receiver)?\s*$/.exec(l)!;
    return { start: Number(m[1]), end: Number(m[2]), word: m[3] ?? "" };
  });
}

function expectIntervals(got: { start: number; end: number; omitted: boolean }[], why: string): void {
  expect(got.map((i) => i.omitted), why).toEqual(INTERVALS.map((i) => i.omitted));
  got.forEach((i, k) => {
    expect(Math.abs(i.start - INTERVALS[k]!.start), why).toBeLessThanOrEqual(JITTER_S);
    expect(Math.abs(i.end - INTERVALS[k]!.end), why).toBeLessThanOrEqual(JITTER_S);
  });
}

/** Text: the five intervals, then the summary lines, which cover the 3 measured seconds from 0.00. */
function expectText(out: string, summary: string[]): void {
  const all = labels(out);
  const sums = all.filter((l) => l.word === "sender" || l.word === "receiver");
  const intervals = all.filter((l) => !sums.includes(l));
  // A server prints one more short interval when the client's TEST_END reaches it after its own end (3.12's does
  // too: "3.00-3.04" after our client's test; a loaded host has delayed it by up to 0.2 s, timed with both clocks);
  // the five before it are the test's.
  const tail = intervals.slice(INTERVALS.length);
  expect(tail.length, out).toBeLessThanOrEqual(1);
  for (const t of tail) expect(t.end - t.start, out).toBeLessThan(LATE_END_S);
  expectIntervals(intervals.slice(0, INTERVALS.length).map((l) => ({ ...l, omitted: l.word === "(omitted)" })), out);
  expect(sums.map((s) => s.word), out).toEqual(summary);
  for (const s of sums) {
    expect(s.start, out).toBe(0);
    expect(Math.abs(s.end - 3), out).toBeLessThan(LATE_END_S);
  }
}

interface JsonInterval {
  sum: { start: number; end: number; omitted: boolean };
  streams: { start: number; end: number; omitted: boolean }[];
}

function expectJson(f: Finished): void {
  const doc = json(f) as unknown as { intervals: JsonInterval[]; start: { test_start: { omit: number } } };
  expect(doc.start.test_start.omit).toBe(2);
  const intervals = doc.intervals.slice(0, INTERVALS.length);
  expectIntervals(intervals.map((i) => i.sum), f.stdout);
  // Every stream's interval carries the same times and flag as the sum.
  for (const i of intervals) expect(i.streams.map((s) => [s.start, s.end, s.omitted])).toEqual([[i.sum.start, i.sum.end, i.sum.omitted]]);
}

async function pair(server: (a: string[]) => Proc, client: (a: string[]) => Proc, serverArgs: string[], clientArgs: string[]) {
  const port = freePorts(17100, 17200, 1);
  const srv = server(["-s", "-1", "-p", String(port), ...serverArgs]);
  try {
    await waitListening(port);
    const c = await client(["-c", "127.0.0.1", "-p", String(port), ...ARGS, ...clientArgs]).done;
    return { client: c, server: await srv.done };
  } finally {
    srv.kill();
  }
}

describe.skipIf(!HAVE)("iperf3 -O 2 against stock 3.12", () => {
  test("stock client → anyperf iperf3 -s: the server's text labels and omitted markers", async () => {
    const r = await pair(ours, stock, [], []);
    expect(r.client.code).toBe(0);
    expectText(r.server.stdout, ["receiver"]);
  }, T);

  test("stock client → anyperf iperf3 -s -J: the server's document", async () => {
    const r = await pair(ours, stock, ["-J"], []);
    expectJson(r.server);
  }, T);

  test("anyperf iperf3 -c → stock server: the client's text labels", async () => {
    const r = await pair(stock, ours, [], []);
    expect(r.client.code).toBe(0);
    expectText(r.client.stdout, ["sender", "receiver"]);
  }, T);

  test("anyperf iperf3 -c -J → stock server: the client's document", async () => {
    const r = await pair(stock, ours, [], ["-J"]);
    expectJson(r.client);
  }, T);
});
