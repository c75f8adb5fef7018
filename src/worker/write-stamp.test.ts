import { expect, test } from "bun:test";
import { WriteStamper } from "./write-stamp.ts";

test("each stamp: the wall clock as seconds and microseconds, the next number, and the sequence past 2^32 in two words", () => {
  const buf = new Uint8Array(1 << 20);
  const v = new DataView(buf.buffer);
  let now = 1_796_456_953_751_528.4;
  const s = new WriteStamper(buf, { stampAt: 0, idAt: 8, seqAt: 12, seqBase: 2 ** 32 - buf.byteLength - 10 }, () => now);
  s.stamp();
  expect([v.getUint32(0), v.getUint32(4), v.getUint32(8), v.getUint32(12), v.getUint32(16)]).toEqual([1_796_456_953, 751_528, 1, 2 ** 32 - 10, 0]);
  now += 1_000_000.9;
  s.stamp();
  // 2^32 - 10 + 2^20 = 2^32 + (2^20 - 10): lower and upper words.
  expect([v.getUint32(0), v.getUint32(4), v.getUint32(8), v.getUint32(12), v.getUint32(16)]).toEqual([1_796_456_954, 751_529, 2, 2 ** 20 - 10, 1]);
});
