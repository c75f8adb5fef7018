import { expect, test } from "bun:test";
import { concatBytes } from "./bytes.ts";

test("concatBytes joins parts in order, skips empty ones and copies rather than aliases", () => {
  const a = Uint8Array.of(1, 2);
  const b = new Uint8Array(0);
  const c = Uint8Array.of(3);
  const out = concatBytes([a, b, c, a.subarray(1)]);
  expect([...out]).toEqual([1, 2, 3, 2]);
  a[0] = 9;
  expect(out[0]).toBe(1);
  expect(concatBytes([]).length).toBe(0);
});
