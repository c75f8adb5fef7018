import { describe, expect, test } from "bun:test";
import { FixedFramer } from "./fixed-framer.ts";

describe("FixedFramer", () => {
  const stream = Uint8Array.from({ length: 11 }, (_, i) => i);

  test("the same messages however the bytes are split; the tail stays pending", () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const f = new FixedFramer(4);
      const got = [...f.push(stream.subarray(0, cut)), ...f.push(stream.subarray(cut))].map((m) => [...m]);
      expect(got).toEqual([
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ]);
      expect(f.pending).toBe(3);
    }
  });

  test("one byte at a time; each message its own array", () => {
    const f = new FixedFramer(4);
    const got = [...stream].flatMap((b) => f.push(Uint8Array.of(b)));
    expect(got).toHaveLength(2);
    expect(got[0]).not.toBe(got[1]);
    expect([...got[1]!]).toEqual([4, 5, 6, 7]);
  });
});
