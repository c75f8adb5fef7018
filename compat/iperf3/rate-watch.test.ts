import { expect, test } from "bun:test";
import { PolledPlane } from "../../src/engine/polled-plane.ts";
import { TestRun } from "../../src/engine/test-run.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import { RateWatch } from "./rate-watch.ts";
import { blankStream } from "./side.ts";

/** Two streams, one each way, counted on the main thread: the watch sums both directions over its window. */
function setUp(windowS: number) {
  const moved = [{ bytes: 0 }, { bytes: 0 }];
  const specs = [StreamSpec.parse({ kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: 9 } }), StreamSpec.parse({ kind: "tcp-recv", id: 1, listen: { host: "127.0.0.1", port: 0 } })];
  const plane = new PolledPlane(specs, (i) => moved[i]!);
  const run = new TestRun({ mode: "iperf3", role: "server", transport: "tcp", test: "stream" }, { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 1 });
  run.attach(plane, "send");
  const streams = [0, 1].map((index) => ({ report: blankStream(index + 1, 5, index === 0), plane, index }));
  return { run, moved, watch: new RateWatch(run, streams, windowS) };
}

/** performance.now() now, and a stamp at which t0 + 1000 − t0 comes out a rounding short of 1000 (so does t0 + 1500 − (t0 + 500)). */
const starts = [["now", performance.now()], ["rounding short", 1048.2]] as const;

test.each(starts)("a sliding window (t0 %s): no rate before a whole window passed, then sent and received over the last window", (_, t0) => {
  const { run, moved, watch } = setUp(1);
  expect(watch.look(t0)).toBeUndefined();
  moved[0]!.bytes = 50_000;
  expect(watch.look(t0 + 500)).toBeUndefined();
  moved[1]!.bytes = 75_000;
  const first = watch.look(t0 + 1000)!;
  expect(first.seconds).toBeCloseTo(1, 9);
  expect(first.bps).toBeCloseTo(1_000_000, 3);
  moved[0]!.bytes += 10_000;
  // The window slid past its first cut: from t0 + 500 on.
  const r = watch.look(t0 + 1500)!;
  expect(r.seconds).toBeCloseTo(1, 9);
  expect(r.bps).toBeCloseTo(((75_000 + 10_000) * 8) / 1, 3);
  run.finish();
});

test.each(starts)("/0 (t0 %s): the whole test so far, once a second has passed", (_, t0) => {
  const { run, moved, watch } = setUp(0);
  watch.look(t0);
  moved[0]!.bytes = 1000;
  expect(watch.look(t0 + 900)).toBeUndefined();
  for (let k = 1; k <= 30; k++) {
    moved[0]!.bytes += 1000;
    watch.look(t0 + 900 + k * 100);
  }
  const r = watch.look(t0 + 4000)!;
  expect(r.seconds).toBeCloseTo(4, 9);
  expect(r.bps).toBeCloseTo((31_000 * 8) / 4, 3);
  run.finish();
});
