import { expect, test } from "bun:test";
import { PolledPlane } from "../../src/engine/polled-plane.ts";
import { TestRun } from "../../src/engine/test-run.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import { settleReceived, StreamSampler, type SampledStream } from "./sampler.ts";
import { UNDER_MARK_READ_MS } from "../../src/worker/poll-group.ts";
import { blankStream } from "./side.ts";

/**
 * The sampler reads every figure as a window of the Test (real planes, counted on the main thread here): intervals,
 * totals, the omit restart and the freeze, with no subtraction of its own.
 */

const timing = { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 1 };

function stream(kind: "tcp-send" | "udp-recv", sender: boolean) {
  const moved = { bytes: 0, packets: 0, maxSeq: 0, lost: 0, outOfOrder: 0, jitter: 0 };
  const spec = kind === "tcp-send" ? { kind, id: 0, connect: { host: "127.0.0.1", port: 9 } } : { kind, id: 0, listen: { host: "127.0.0.1", port: 0 } };
  const plane = new PolledPlane([StreamSpec.parse(spec)], () => moved);
  const s: SampledStream = { report: blankStream(1, 5, sender), plane, index: 0 };
  return { s, moved };
}

test("TCP sender: intervals and totals count from the stream's open; a frozen stream stops counting at its freeze", () => {
  const run = new TestRun({ mode: "iperf3", role: "client", transport: "tcp", test: "stream" }, timing);
  const { s, moved } = stream("tcp-send", true);
  run.attach(s.plane, "send");
  run.cutsIntervals();
  moved.bytes = 4096; // written before TEST_START was handled
  const t0 = performance.now();
  const sampler = new StreamSampler([s], false, run);
  run.beginMeasuring(t0, true);
  sampler.start(t0, 0);
  moved.bytes += 1000;
  sampler.sample(t0 + 1000);
  moved.bytes += 500;
  sampler.freeze(() => true);
  moved.bytes += 7; // the Worker wrote a little more after the stop
  sampler.sample(t0 + 2000);
  moved.bytes += 9;
  sampler.finish(t0 + 2500);
  expect(s.report.intervals.map((i) => [i.startS, i.endS, i.bytes])).toEqual([[0, 1, 5096], [1, 2, 500], [2, 2.5, 0]]);
  expect(s.report.bytesSent).toBe(5596);
  expect(sampler.progress(1000).sent).toBe(5596 + 16);
  run.finish();
});

test("UDP receiver: packets are the rise of the highest sequence; loss and counts restart at the omit end", () => {
  const run = new TestRun({ mode: "iperf3", role: "server", transport: "udp", test: "stream" }, timing);
  const { s, moved } = stream("udp-recv", false);
  run.attach(s.plane, "recv");
  run.cutsIntervals();
  moved.packets = moved.maxSeq = 1; // read before TEST_START was handled: counted, as 3.12 reads it after
  moved.bytes = 1000;
  const t0 = performance.now();
  const sampler = new StreamSampler([s], true, run);
  run.beginWarmup(t0, true);
  sampler.start(t0, 1);
  Object.assign(moved, { bytes: 1000 + 8000, packets: 9, maxSeq: 10, lost: 1, jitter: 0.003 });
  sampler.omitEnd(t0 + 1000);
  expect([s.report.omittedPacketCount, s.report.omittedCntError]).toEqual([10, 1]);
  Object.assign(moved, { bytes: 1000 + 8000 + 3000, packets: 12, maxSeq: 14, lost: 2, outOfOrder: 1, jitter: 0.001 });
  sampler.finish(t0 + 2000);
  const [omitted, measured] = s.report.intervals;
  expect([omitted!.omitted, omitted!.bytes, omitted!.packets, omitted!.lost]).toEqual([true, 9000, 9, 1]);
  expect([measured!.omitted, measured!.bytes, measured!.packets, measured!.lost, measured!.outOfOrder, measured!.jitterS]).toEqual([false, 3000, 4, 1, 1, 0.001]);
  expect([s.report.bytesReceived, s.report.packetCount, s.report.cntError, s.report.jitterS]).toEqual([3000, 14, 2, 0.001]);
  run.finish();
});

test("settleReceived waits out a marked receiver's last read: bytes that land UNDER_MARK_READ_MS after the others still count", async () => {
  const start = performance.now();
  // what a poll group's sweep does: the bytes under the mark are read a while after everything else stood still
  const received = () => (performance.now() - start < UNDER_MARK_READ_MS * 0.75 ? 100 : 200);
  const sampler = { progress: () => ({ sent: 0, received: received(), sentBlocks: 0, receivedBlocks: 0 }) } as unknown as StreamSampler;
  await settleReceived(sampler, 1);
  expect(received()).toBe(200);
  expect(performance.now() - start).toBeLessThan(150);
});
