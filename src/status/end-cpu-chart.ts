import { z } from "zod";
import { CpuPercent } from "../host/window.ts";
import { coresChart } from "../report/cores-chart.ts";
import type { TestView } from "./schema.ts";

/**
 * GET /results/<id>/cpu.svg: a finished test's CPU per core by mode at this end and, where the peer sent its half (an
 * anyperf client against serve), at the remote end, side by side in one SVG: the charts `anyperf report` draws,
 * read from the results document the test ended with. Undefined when the document has no per-core figures (a
 * dialect's own results, a platform without them).
 */

const Host = z.looseObject({ host: z.looseObject({ perCpu: z.array(CpuPercent.extend({ cpu: z.number().int().nonnegative() })).min(1) }).optional() });
const Ends = z.looseObject({ cpu: Host.optional(), remote: z.looseObject({ cpu: Host.optional() }).optional() });

const WIDTH = 560;
const GAP = 10;

export function endCpuSvg(results: unknown): string | undefined {
  const ends = Ends.safeParse(results);
  if (!ends.success) return undefined;
  const charts = [
    ...(ends.data.cpu?.host ? [coresChart("this end", ends.data.cpu.host.perCpu)] : []),
    ...(ends.data.remote?.cpu?.host ? [coresChart("remote end", ends.data.remote.cpu.host.perCpu)] : []),
  ];
  if (charts.length === 0) return undefined;
  const width = charts.length * WIDTH + (charts.length - 1) * GAP;
  // Each chart is a whole <svg> of its own, placed by its x.
  const placed = charts.map((svg, i) => svg.replace("<svg ", `<svg x="${i * (WIDTH + GAP)}" `));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="260" viewBox="0 0 ${width} 260" data-ends="${charts.length}">${placed.join("")}</svg>`;
}

/** GET /cpu.svg: the shown test's CPU per core by mode at this end over the last interval; undefined before any. */
export function liveCpuSvg(view: TestView | undefined): string | undefined {
  const cores = view?.cpu?.perCore;
  return cores?.length ? coresChart("this end, last interval", cores) : undefined;
}
