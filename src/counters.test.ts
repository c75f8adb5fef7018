import { expect, test } from "bun:test";
import { allocCounters, blankCounters, copyCounters, COUNTER_FIELDS, delta, HIST_BUCKETS, SLOTS_PER_STREAM, Slot, snapshot, zero } from "./counters.ts";

test("slots follow the table, each field once, inside a stream's block", () => {
  COUNTER_FIELDS.forEach((f, i) => expect(Slot[f.name]).toBe(i));
  expect(new Set(COUNTER_FIELDS.map((f) => f.name)).size).toBe(COUNTER_FIELDS.length);
  expect(COUNTER_FIELDS.length).toBeLessThanOrEqual(SLOTS_PER_STREAM);
});

test("a snapshot decodes every field of every stream from its slot", () => {
  const b = allocCounters(2);
  const c = new Float64Array(b.counters);
  for (let s = 0; s < 2; s++) COUNTER_FIELDS.forEach((_, i) => (c[s * SLOTS_PER_STREAM + i] = 100 * s + i + 1));
  const snap = snapshot(b, copyCounters(b), 2, 5, false);
  expect(snap.atMs).toBe(5);
  COUNTER_FIELDS.forEach((f, i) => {
    expect(snap.streams[0]![f.name]).toBe(i + 1);
    expect(snap.streams[1]![f.name]).toBe(100 + i + 1);
  });
});

test("a window subtracts counters and takes levels from its later end; zero keeps levels", () => {
  const from = { ...blankCounters(), bytes: 10, tcpRetrans: 2, jitter: 0.5, maxSeq: 7, tcpRttUs: 40 };
  const to = { ...blankCounters(), bytes: 25, tcpRetrans: 5, jitter: 0.25, maxSeq: 9, tcpRttUs: 30 };
  const d = delta(from, to);
  expect(d).toMatchObject({ bytes: 15, tcpRetrans: 3, jitter: 0.25, maxSeq: 9, tcpRttUs: 30 });
  for (const f of COUNTER_FIELDS) expect(zero(to)[f.name]).toBe(f.kind === "counter" ? 0 : to[f.name]);
});

test("a window's histogram: buckets subtract; from a start that timed nothing it is the end's own counts", () => {
  const hist = (pairs: [number, number][]) => {
    const h = new Uint32Array(HIST_BUCKETS);
    for (const [i, n] of pairs) h[i] = n;
    return h;
  };
  const to = { ...blankCounters(), transactions: 9, histogram: hist([[3, 5], [70, 4]]) };
  expect([...delta({ ...blankCounters(), histogram: hist([[3, 2]]) }, to).histogram.filter((n) => n > 0)]).toEqual([3, 4]);
  const fromNothing = delta(blankCounters(), to);
  expect(fromNothing.histogram[3]).toBe(5);
  expect(fromNothing.histogram[70]).toBe(4);
  expect(fromNothing.transactions).toBe(9);
});
