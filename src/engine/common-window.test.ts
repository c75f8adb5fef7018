import { expect, test } from "bun:test";
import { StreamSpec } from "../stream-spec.ts";
import { CommonWindow } from "./common-window.ts";
import { PolledPlane } from "./polled-plane.ts";
import { TestRun } from "./test-run.ts";

const quiet = { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 1 };

/** A Test of one receiving stream whose counters the test moves by hand. */
function receiver() {
  const moved = { bytes: 0, packets: 0, jitter: 0, tcpRttUs: 0, tcpRetrans: 0 };
  const run = new TestRun({ mode: "test", role: "server", transport: "tcp", test: "stream" }, quiet);
  run.attach(new PolledPlane([StreamSpec.parse({ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 } })], () => moved), "recv");
  return { run, moved };
}

test("the window runs from the last Test's start to the first one's end: each counts only what it moved inside", () => {
  const a = receiver();
  const b = receiver();
  const common = new CommonWindow(2);
  const edges: string[] = [];
  common.onEdge((e) => edges.push(e));
  common.follow(a.run);
  common.follow(b.run);
  a.run.beginMeasuring();
  a.moved.bytes = 1000; // a alone: not in the window
  b.run.beginMeasuring();
  expect(edges).toEqual(["open"]);
  a.moved.bytes += 300;
  b.moved.bytes += 700;
  b.run.endMeasuring();
  a.moved.bytes += 5000; // a alone again
  a.run.endMeasuring();
  expect(edges).toEqual(["open", "close"]);
  expect(common.figures(a.run)!.summary.bytes).toBe(300);
  expect(common.figures(b.run)!.summary.bytes).toBe(700);
  expect(common.figures(a.run)!.summary.seconds).toBe(common.seconds!);
  expect(common.window(b.run)!.seconds).toBe(common.seconds!);
  a.run.finish();
  b.run.finish();
});

test("a Test that will never join is dropped: the window opens on the others; one that ends before it opened leaves none", () => {
  const a = receiver();
  const common = new CommonWindow(2);
  common.follow(a.run);
  a.run.beginMeasuring();
  expect(common.seconds).toBeUndefined();
  common.drop();
  a.moved.bytes = 42;
  a.run.endMeasuring();
  expect(common.figures(a.run)!.summary.bytes).toBe(42);

  const b = receiver();
  const c = receiver();
  const never = new CommonWindow(2);
  never.follow(b.run);
  never.follow(c.run);
  b.run.beginMeasuring();
  b.run.endMeasuring();
  c.run.beginMeasuring();
  expect(never.seconds).toBeUndefined();
  expect(never.figures(c.run)).toBeUndefined();
  for (const r of [a, b, c]) r.run.finish();
});
