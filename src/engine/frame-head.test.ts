import { expect, test } from "bun:test";
import { writeFrameHead } from "./frame-head.ts";

const stamps = { stampAt: 20, idAt: 44, seqAt: 52, seqBase: 2, sizeAt: 48 };
const payload = () => new Uint8Array(8192).map((_, i) => 48 + (i % 10));
// 20 Mbit/s at 60 frames/s: 41,666-byte frames.
const frames = { perSecond: 60, meanBps: 20e6, stddevBps: 0, minBytes: 92 };
const at = 1_796_456_953_751_528;

test("the head is the first frame's first 4 KiB, stamped as frame 1 of its size at the given time, the payload untouched", () => {
  const p = payload();
  const written: Uint8Array[] = [];
  const h = writeFrameHead({ payload: p, frames, stampWrites: stamps }, (b) => (written.push(b.slice()), b.byteLength), () => at);
  expect(h).toEqual({ frameHead: { bytes: 4096, frameSize: 41666, wallUs: at } });
  expect(written.length).toBe(1);
  const v = new DataView(written[0]!.buffer);
  expect([v.getUint32(20), v.getUint32(24), v.getUint32(44), v.getUint32(48), v.getUint32(52), v.getUint32(56)]).toEqual([1_796_456_953, 751_528, 1, 41666, 2 + 41666, 0]);
  expect(written[0]!.subarray(60)).toEqual(p.subarray(60, 4096));
  expect(p).toEqual(payload());
});

test("a frame shorter than 4 KiB is written whole; what the socket did not take becomes the stream's preamble", () => {
  const small = { ...frames, meanBps: 60 * 8 * 1000 };
  const h = writeFrameHead({ payload: payload(), frames: small, stampWrites: stamps }, () => 600, () => at);
  expect(h?.frameHead).toEqual({ bytes: 1000, frameSize: 1000, wallUs: at });
  expect(h?.preamble?.byteLength).toBe(400);
  expect(h?.preamble?.[0]).toBe(48 + (600 % 10));
});

test("nothing written (the socket would block, or is gone): no head, the stream writes the whole frame", () => {
  expect(writeFrameHead({ payload: payload(), frames, stampWrites: stamps }, () => 0, () => at)).toBeUndefined();
  expect(writeFrameHead({ payload: payload(), frames, stampWrites: stamps }, () => -1, () => at)).toBeUndefined();
});
