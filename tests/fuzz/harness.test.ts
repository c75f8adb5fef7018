import { expect, test } from "bun:test";
import { BoundError, bounded } from "./harness.ts";

/** The fuzz harness's memory bound: what a call keeps alive fails it, what it only used and dropped does not. */

const kept: Uint8Array[] = [];

test("a call that keeps 100 MiB alive fails with a memory BoundError", () => {
  let err: unknown;
  try {
    // These two judge memory only: filling 100 MiB and a full GC can pass the time budget on a loaded host.
    bounded("keeper", () => void kept.push(new Uint8Array(100 << 20).fill(1)), 30_000);
  } catch (e) {
    err = e;
  }
  kept.length = 0;
  expect(err).toBeInstanceOf(BoundError);
  expect((err as BoundError).message).toMatch(/keeper holds \d+ MiB after a full GC/);
});

test("a call that uses 100 MiB and drops it passes", () => {
  expect(() => bounded("user", () => void new Uint8Array(100 << 20).fill(1), 30_000)).not.toThrow();
});
