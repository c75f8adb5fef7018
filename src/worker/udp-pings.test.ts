import { expect, test } from "bun:test";
import { PING_BYTES, PingBook, readPing, writePing } from "./udp-pings.ts";

test("a ping's stamp reads back from the echo, filler after it or not; a shorter datagram holds none", () => {
  const buf = new Uint8Array(64).fill(0x6e);
  writePing(buf.subarray(0, PING_BYTES), 0xfffffffe, 12345.678);
  expect(readPing(buf)).toEqual({ seq: 0xfffffffe, sentMs: 12345.678 });
  expect(readPing(buf.subarray(0, PING_BYTES))).toEqual({ seq: 0xfffffffe, sentMs: 12345.678 });
  expect(readPing(buf.subarray(0, PING_BYTES - 1))).toBeUndefined();
});

test("replies match their ping by stamp, once; a reply out of order still counts; unanswered pings expire as lost", () => {
  const book = new PingBook(500);
  for (let seq = 0; seq < 5; seq++) book.sent(seq, 1000 + 2 * seq);
  // Out of order: ping 3's reply before ping 1's.
  expect(book.answered(3, 1006)).toBe(1006);
  expect(book.answered(1, 1002)).toBe(1002);
  // A duplicate, and a reply whose time is not the ping's (a filler echo, a stale sequence): no sample.
  expect(book.answered(3, 1006)).toBeUndefined();
  expect(book.answered(2, 999)).toBeUndefined();
  expect(book.expire(1499)).toBe(0);
  // 0 and 2 sent 500 ms or more before; 4 (1008) not yet.
  expect(book.expire(1504)).toBe(2);
  expect(book.answered(0, 1000)).toBeUndefined();
  expect(book.expire(1508)).toBe(1);
});
