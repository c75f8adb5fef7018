import { describe, expect, test } from "bun:test";
import { UserError } from "../../src/errors.ts";
import { formatG2, formatUnits, parseRate, parseSuffixed } from "./units.ts";

describe("iperf 2 number dialect", () => {
  test("suffixes as on the wire: upper case binary, lower case decimal", () => {
    expect(parseRate("10M")).toEqual({ value: 10485760, units: "bps" }); // header 00a00000
    expect(parseRate("2m")).toEqual({ value: 2000000, units: "bps" }); // header 001e8480
    expect(parseRate("100k")).toEqual({ value: 100000, units: "bps" }); // header 000186a0
    expect(parseRate("5G").value).toBe(5 * 2 ** 30);
    expect(parseRate("2048M").value).toBe(2147483648);
    expect(parseRate("1000pps")).toEqual({ value: 1000, units: "pps" });
    expect(parseRate("10M,1M").value).toBe(10485760);
    expect(parseSuffixed("100K", "-n")).toBe(102400); // header 00019000
    expect(parseSuffixed("10K", "-l")).toBe(10240); // header 00002800
    expect(parseSuffixed("1470", "-l")).toBe(1470);
    expect(parseSuffixed("0.5M", "-n")).toBe(524288);
  });

  test("garbage is a one-line UserError", () => {
    for (const bad of ["", "ten", "10X", "-5", "1M2"]) expect(() => parseSuffixed(bad, "-n")).toThrow(UserError);
  });

  test("byte_snprintf widths and units, checked against stock report figures", () => {
    expect(formatUnits(1441852, "A")).toBe("1.38 MByte");
    expect(formatUnits(1441852 / 1.0012, "a")).toBe("11.5 Mbit");
    expect(formatUnits(136710, "A")).toBe(" 134 KByte");
    expect(formatUnits(136710 / 1.021, "a")).toBe("1.07 Mbit");
    expect(formatUnits(4 * 2 ** 30, "A")).toBe("4.00 GByte");
    expect(formatUnits(536870972 / 2.0157, "a")).toBe("2.13 Gbit");
    expect(formatUnits(16384, "A")).toBe("16.0 KByte");
    expect(formatUnits(131072, "A")).toBe(" 128 KByte");
    expect(formatUnits(212992, "A")).toBe(" 208 KByte");
    expect(formatUnits(0, "A")).toBe("0.000 Byte");
    expect(formatUnits(1000 * 1024, "A")).toBe("1000 KByte");
    expect(formatUnits(2 ** 20, "M")).toBe("1.00 MByte");
    expect(formatUnits(125000, "m")).toBe("1.00 Mbit");
  });

  test("%.2g like C", () => {
    expect(formatG2(0)).toBe("0");
    expect(formatG2((100 * 5) / 51)).toBe("9.8");
    expect(formatG2(12.34)).toBe("12");
    expect(formatG2(0.5)).toBe("0.5");
    expect(formatG2(100)).toBe("1e+02");
    expect(formatG2(0.0001234)).toBe("0.00012");
    expect(formatG2(0.00001234)).toBe("1.2e-05");
    expect(formatG2(99.96)).toBe("1e+02");
    expect(formatG2(Number.NaN)).toBe("-nan");
  });
});
