import { describe, expect, test } from "bun:test";
import { formatFigure, formatMicros, formatPercent, formatTarget, renderTable } from "./format.ts";
import { costPercent, targetMet } from "./report.ts";

describe("formatFigure", () => {
  test("rates scale to the unit a reader expects", () => {
    expect(formatFigure(23_456_000_000, "bit/s")).toBe("23.46 Gbit/s");
    expect(formatFigure(781_055_272, "bit/s")).toBe("781.1 Mbit/s");
    expect(formatFigure(233_140, "packets/s")).toBe("233.1k pkt/s");
    expect(formatFigure(74_812, "trans/s")).toBe("74.8k trans/s");
    expect(formatFigure(17_105, "conn/s")).toBe("17.11k conn/s");
    expect(formatFigure(12.34, "ms")).toBe("12.3 ms");
    expect(formatFigure(122_257_408, "bytes")).toBe("122.3 MB");
  });
});

describe("formatMicros", () => {
  test("µs below 1 ms, ms above", () => {
    expect(formatMicros(57.4)).toBe("57 µs");
    expect(formatMicros(4055.03)).toBe("4.06 ms");
  });
});

describe("formatTarget", () => {
  test("each kind of target reads like the issue's table", () => {
    expect(formatTarget({ kind: "ratio-at-least", value: 1.1 }, "bit/s")).toBe("≥ 1.10");
    expect(formatTarget({ kind: "anyperf-at-most", value: 15 }, "ms")).toBe("≤ 15 ms");
    expect(formatTarget({ kind: "anyperf-at-most", value: 150e6 }, "bytes")).toBe("≤ 150 MB");
    expect(formatTarget({ kind: "cost-at-most-percent", value: 2 }, "bit/s")).toBe("cost ≤ 2 %");
  });
});

describe("targetMet", () => {
  test("a ratio target compares the median ratio", () => {
    expect(targetMet({ kind: "ratio-at-least", value: 1.1 }, 1.1, null)).toBe(true);
    expect(targetMet({ kind: "ratio-at-least", value: 1.1 }, 1.09, 5)).toBe(false);
    expect(targetMet({ kind: "ratio-at-least", value: 1 }, null, 5)).toBeNull();
  });
  test("an absolute target judges anyperf's own figure", () => {
    expect(targetMet({ kind: "anyperf-at-most", value: 15 }, 9, 14.9)).toBe(true);
    expect(targetMet({ kind: "anyperf-at-most", value: 15 }, 0.1, 15.1)).toBe(false);
  });
  test("a cost target is one minus the ratio, in percent", () => {
    expect(costPercent(0.97)).toBeCloseTo(3, 9);
    expect(targetMet({ kind: "cost-at-most-percent", value: 2 }, 0.985, null)).toBe(true);
    expect(targetMet({ kind: "cost-at-most-percent", value: 2 }, 0.97, null)).toBe(false);
    expect(targetMet({ kind: "cost-at-most-percent", value: 2 }, 1.05, null)).toBe(true);
    expect(targetMet({ kind: "cost-shown" }, 0.5, null)).toBeNull();
  });
});

test("formatPercent rounds and shows a dash for no figure", () => {
  expect(formatPercent(97.6)).toBe("98 %");
  expect(formatPercent(null)).toBe("—");
});

test("renderTable pads every column to its widest cell", () => {
  expect(renderTable(["a", "bb"], [["ccc", "d"], ["e", ""]])).toBe("a    bb\n---  --\nccc  d\ne");
});
