import { describe, expect, test } from "bun:test";
import { Entries, type CValue, formatG, formatNumber, formatString, printCompact, printFormatted } from "./cjson.ts";
import { CONTROL_CAPTURES, loadControlCapture, readFixture } from "../../tests/fixtures/iperf3/capture.ts";
import { captureJson, parseOrdered } from "../../tests/fixtures/iperf3/ordered-json.ts";
import { fromWireInt } from "./wire-json.ts";

/** What a reader does with 3.12's unsigned -1: the value we hold and print back. */
function wireValue(v: CValue): CValue {
  if (typeof v === "number") return fromWireInt(v);
  if (Array.isArray(v)) return v.map(wireValue);
  if (v instanceof Entries) return new Entries(v.entries.map(([k, x]) => [k, wireValue(x)] as const));
  return v;
}

describe("formatG", () => {
  test("matches C %g on representative values", () => {
    expect(formatG(2.000101, 15)).toBe("2.000101");
    expect(formatG(1.074099349230528e-5, 15)).toBe("1.07409934923053e-05");
    expect(formatG(1.074099349230528e-5, 17)).toBe("1.074099349230528e-05");
    expect(formatG(123456789012345680000, 15)).toBe("1.23456789012346e+20");
    expect(formatG(0.0001, 15)).toBe("0.0001");
    expect(formatG(0.00001, 15)).toBe("1e-05");
    expect(formatG(100, 2)).toBe("1e+02");
    expect(formatG(-2.5, 15)).toBe("-2.5");
  });
});

describe("formatNumber", () => {
  test("integers, the unsigned image of -1, non-finite values", () => {
    expect(formatNumber(5111808)).toBe("5111808");
    expect(formatNumber(-1)).toBe("-1");
    expect(formatNumber(-1, { negativeAsUnsigned: true })).toBe("18446744073709551615");
    expect(formatNumber(Number.NaN)).toBe("null");
    expect(formatNumber(2 ** 63)).toBe("9223372036854775807");
  });

  test("a double next to DBL_MAX prints with 17 digits so it reads back finite (found by fuzzing)", () => {
    const d = 1.7976931348623151e308;
    expect(Number(formatNumber(d))).toBe(d);
    expect(formatNumber(1.5)).toBe("1.5");
  });
});

describe("formatString", () => {
  test("escapes like cJSON", () => {
    expect(formatString('a"b\\c\n\t\u0001é')).toBe('"a\\"b\\\\c\\n\\t\\u0001é"');
  });
});

/** Every JSON number text in the captures must come back unchanged from its double. */
describe("numbers in captured documents print back identically", () => {
  // [name, document, printed by 3.12 (-1 as 18446744073709551615; 3.21 prints -1)]
  const docs: Array<[string, string, boolean]> = [];
  for (const name of ["iperf3-client-json-tcp.txt", "iperf3-client-json-udp.txt", "iperf3-client-json-bidir.txt", "iperf3-client-json-rev.txt", "iperf3-client-json-udprev.txt"]) {
    docs.push([name, captureJson(readFixture(name)), true]);
  }
  for (const name of CONTROL_CAPTURES) {
    const c = loadControlCapture(name);
    for (const bytes of [c.client, c.server]) {
      for (const m of new TextDecoder("latin1").decode(bytes).matchAll(/\{.*?\}(?=[\x00-\x1f]|$)/gs)) docs.push([name, m[0], c.version === "3.12"]);
    }
  }
  test.each(docs)("%s", (_name, text, by312) => {
    const { numbers } = parseOrdered(text);
    expect(numbers.length).toBeGreaterThan(0);
    for (const n of numbers) expect(formatNumber(fromWireInt(Number(n)), { negativeAsUnsigned: by312 })).toBe(n);
  });
});

describe("printFormatted reproduces the stock -J documents", () => {
  test.each(["iperf3-client-json-tcp.txt", "iperf3-client-json-udp.txt", "iperf3-client-json-bidir.txt", "iperf3-client-json-rev.txt", "iperf3-client-json-udprev.txt", "iperf3-client-json-error.txt"])(
    "%s",
    (name) => {
      const text = captureJson(readFixture(name));
      expect(printFormatted(parseOrdered(text).value)).toBe(text);
    },
  );
});

describe("printCompact reproduces the stock control documents", () => {
  test.each(CONTROL_CAPTURES)("%s", (name) => {
    const c = loadControlCapture(name);
    for (const bytes of [c.client, c.server]) {
      for (const m of new TextDecoder("latin1").decode(bytes).matchAll(/\{.*?\}(?=[\x00-\x1f]|$)/gs)) {
        expect(printCompact(wireValue(parseOrdered(m[0]).value), { negativeAsUnsigned: c.version === "3.12" })).toBe(m[0]);
      }
    }
  });

  test("repeated keys survive", () => {
    expect(printCompact(new Entries([["a", 1], ["a", 2]]))).toBe('{"a":1,"a":2}');
    expect(printFormatted({ a: [], b: new Entries([]) })).toBe('{\n\t"a":\t[],\n\t"b":\t{\n\t}\n}');
  });
});
