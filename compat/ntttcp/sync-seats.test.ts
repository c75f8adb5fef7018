import { expect, test } from "bun:test";
import { SyncSeats } from "./sync-seats.ts";

test("seats are given until full", () => {
  const s = new SyncSeats<string>(2);
  expect(s.admit("a")).toEqual({});
  expect(s.admit("b")).toEqual({});
  expect(s.size).toBe(2);
});

test("when full, the oldest connection that never completed a message gives its seat to the newcomer", () => {
  const s = new SyncSeats<string>(3);
  s.admit("sender");
  s.admit("idle1");
  s.admit("half");
  s.received("sender", 4);
  // Three bytes are not a message yet.
  s.received("half", 3);
  expect(s.admit("new1")).toEqual({ evict: "idle1" });
  expect(s.admit("new2")).toEqual({ evict: "half" });
  expect(s.size).toBe(3);
});

test("when every holder has spoken, the newcomer is refused", () => {
  const s = new SyncSeats<string>(2);
  s.admit("a");
  s.admit("b");
  s.received("a", 4);
  s.received("b", 2);
  s.received("b", 2);
  expect(s.admit("c")).toBeNull();
  s.leave("a");
  expect(s.admit("c")).toEqual({});
});

test("bytes for a connection that left are ignored", () => {
  const s = new SyncSeats<string>(1);
  s.admit("a");
  s.leave("a");
  s.received("a", 4);
  expect(s.size).toBe(0);
});
