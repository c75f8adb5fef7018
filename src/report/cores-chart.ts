import { stackedBarChart } from "./svg-charts.ts";
import type { CpuPercent } from "../host/window.ts";

/** Cores drawn per end: the busiest, so a 64-core host's chart stays small and shows the core that limits. */
const CORES_SHOWN = 8;
const MODES = ["user", "nice", "system", "irq", "softirq", "steal", "iowait"] as const;

export type CoreModes = CpuPercent & { cpu: number };

/** CPU per core by mode at one end of a run (the report's per-run chart and the live page's, once the run is done). */
export function coresChart(end: string, cores: readonly CoreModes[]): string {
  const shown = [...cores].sort((a, b) => (b.busy ?? 0) - (a.busy ?? 0)).slice(0, CORES_SHOWN).sort((a, b) => a.cpu - b.cpu);
  return stackedBarChart({
    title: `CPU per core by mode, ${end}${cores.length > shown.length ? ` (the ${shown.length} busiest of ${cores.length} cores)` : ""}`,
    yLabel: "% of the core",
    yMax: 100,
    bars: shown.map((c) => ({ label: `cpu${c.cpu}`, parts: MODES.map((m) => ({ series: m, value: c[m] ?? 0 })) })),
  });
}
