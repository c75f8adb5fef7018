import { expect, test } from "bun:test";
import { atoi, unitAtod, windowsSize } from "./c-numbers.ts";

test("atoi reads leading digits like C", () => {
  expect(atoi("300")).toBe(300);
  expect(atoi("s")).toBe(0);
  expect(atoi("5k")).toBe(5);
  expect(atoi(" -3x")).toBe(-3);
  expect(atoi("")).toBe(0);
  expect(atoi("99999999999")).toBe(0x7fffffff);
});

test("unit_atod: k/m/g multiply by the unit, other suffixes are ignored", () => {
  expect(unitAtod("64K", 1024)).toBe(65536);
  expect(unitAtod("1.5m", 1024)).toBe(1.5 * 1048576);
  expect(unitAtod("10G", 1000)).toBe(1e10);
  expect(unitAtod("100x", 1000)).toBe(100);
  expect(unitAtod("abc", 1000)).toBe(0);
});

test("Windows sizes: unit letter anywhere multiplies", () => {
  expect(windowsSize("64k")).toBe(65536);
  expect(windowsSize("1M")).toBe(1048576);
  expect(windowsSize("128")).toBe(128);
});
