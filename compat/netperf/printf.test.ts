import { expect, test } from "bun:test";
import { sprintf } from "./printf.ts";

test("%g as glibc prints it: six significant digits, no trailing zeros, exponent outside 1e-4..1e6", () => {
  expect(sprintf("%g", 100)).toBe("100");
  expect(sprintf("%g", 2.5)).toBe("2.5");
  expect(sprintf("%g", 1234567)).toBe("1.23457e+06");
  expect(sprintf("%g", 0.0001)).toBe("0.0001");
  expect(sprintf("%g", 0.00001234)).toBe("1.234e-05");
  expect(sprintf("%g", 0)).toBe("0");
  expect(sprintf("%.3g", 99.95)).toBe("100");
});
