import { expect, test } from "bun:test";
import { HIST_BUCKETS } from "../../src/counters.ts";
import { record } from "../../src/histogram.ts";
import { histogramsBanner, writePdfSpec, writeTimeBins, writeTimesText } from "./write-times.ts";
import { pdfLine } from "./pdf-line.ts";

const DEFAULT = { binUs: 100, unit: "us" as const, width: 100, bins: 10_000, lowerCi: 5, upperCi: 95 };

test("the write-times column: ms with 3 decimals; no writes print zeros and (0); one write no deviation", () => {
  expect(writeTimesText({ count: 10, meanUs: 128.4, minUs: 97, maxUs: 254.2, stdevUs: 51 })).toBe("0.128/0.097/0.254/0.051 ms (10)");
  expect(writeTimesText(undefined)).toBe("0.000/0.000/0.000/0.000 ms (0)");
  expect(writeTimesText({ count: 1, meanUs: 200, minUs: 200, maxUs: 200, stdevUs: Number.NaN })).toBe("0.200/0.200/0.200/0.000 ms (1)");
});

test("the banner line, as 2.1.8 prints it for --histograms and --histograms=1m,100", () => {
  expect(histogramsBanner(DEFAULT)).toBe("Enabled write histograms bin-width=0.100 ms, bins=10000");
  expect(histogramsBanner({ ...DEFAULT, binUs: 1000, unit: "ms", width: 1, bins: 100 })).toBe("Enabled write histograms bin-width=1.000 ms, bins=100");
});

test("writes re-binned at 100 µs: eleven spread as a 2.2.1 run's were, and its line", () => {
  // 2.2.1 printed "cnt(11)=1:2,2:7,3:1,4:1 (5.00/95.00/99.7%=1/4/4,...)" for its write times of 0.096-0.360 ms.
  const h = new Uint32Array(HIST_BUCKETS);
  for (const us of [96, 99, 120, 130, 140, 150, 160, 170, 180, 250, 360]) record(h, us);
  const { bins, high } = writeTimeBins(h, DEFAULT);
  expect(high).toBe(0);
  expect(pdfLine(1, 0, 1.0501, bins, writePdfSpec(DEFAULT, true), { low: 0, high })).toBe(
    "[  1] 0.0000-1.0501 sec W8(f)-PDF: bin(w=100us):cnt(11)=1:2,2:7,3:1,4:1 (5.00/95.00/99.7%=1/4/4,Outliers=0,obl/obu=0/0)",
  );
});

test("beyond the last bin counts as obu; an interval's label has no (f); an upper bound above 99.7 swaps places", () => {
  const h = new Uint32Array(HIST_BUCKETS);
  record(h, 500);
  record(h, 50_000);
  const spec = { ...DEFAULT, binUs: 1000, unit: "ms" as const, width: 1, bins: 10, upperCi: 99.9 };
  const { bins, high } = writeTimeBins(h, spec);
  expect(high).toBe(1);
  // The count and the shares hold the one beyond: 50 % in bin 1, so 99.7 and 99.9 % are never passed (the bin count).
  expect(pdfLine(2, 1, 2, bins, writePdfSpec(spec, false), { low: 0, high })).toBe(
    "[  2] 1.0000-2.0000 sec W8-PDF: bin(w=1ms):cnt(2)=1:1 (5.00/99.7/99.90/%=1/10/10,Outliers=0,obl/obu=0/1)",
  );
});
