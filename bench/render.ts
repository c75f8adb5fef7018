import { formatFigure, formatMicros, formatPercent, formatTarget, renderTable } from "./format.ts";
import { type BenchReport, type Row, type Side, costPercent } from "./report.ts";

/** The printed report: the table, then what was skipped or failed and how every figure was taken. */

function figureCell(side: Side | null, row: Row): string {
  if (!side) return "—";
  if (side.figure === null) return side.errors.length ? "error" : "—";
  const { loss_percent: loss, p99_us: p99, client_memory_per_flow_bytes: clientFlow, server_memory_per_flow_bytes: serverFlow, slowest_to_fastest: starved } = side.extra;
  const kib = (bytes: number | undefined, end: string) => (bytes === undefined ? "" : `, ${(bytes / 1024).toFixed(0)} KiB/flow ${end}`);
  return (
    formatFigure(side.figure, row.unit) +
    (loss === undefined ? "" : `, ${loss.toFixed(1)} % lost`) +
    (p99 === undefined ? "" : `, p99 ${formatMicros(p99)}`) +
    kib(clientFlow, "client") +
    kib(serverFlow, "server") +
    (starved === undefined ? "" : `, slowest/fastest ${starved.toFixed(2)}`)
  );
}

const shownOnly = (row: Row) => row.target.kind === "cost-shown";

function resultCell(row: Row): string {
  if (row.skipped) return "skipped";
  const costly = row.target.kind === "cost-at-most-percent" || shownOnly(row);
  const cost = costly && row.ratio !== null ? ` (cost ${costPercent(row.ratio).toFixed(1)} %)` : "";
  if (shownOnly(row) && row.ratio !== null) return `shown${cost}`;
  if (row.target.kind === "figure-shown") return row.anyperf?.figure === null ? "error" : "shown";
  if (row.met === null) return "error";
  return (row.met ? "met" : "MISSED") + cost;
}

/** The median ratio and, when the repeats disagree, their range: on a shared machine the spread is the caveat. */
function ratioCell(row: Row): string {
  if (row.ratio === null) return "—";
  if (row.ratios.length < 2) return row.ratio.toFixed(2);
  return `${row.ratio.toFixed(2)} (${Math.min(...row.ratios).toFixed(2)}–${Math.max(...row.ratios).toFixed(2)})`;
}

export function renderReport(r: BenchReport): string {
  const head = ["workload", "reference", "anyperf", "ratio", "target", "CPU ref", "CPU anyperf", "result"];
  const rows = r.rows.map((row) => [
    row.workload,
    row.reference ? `${row.reference.label} ${figureCell(row.reference, row)}` : "—",
    figureCell(row.anyperf, row),
    ratioCell(row),
    formatTarget(row.target, row.unit),
    formatPercent(row.reference?.cpu_percent ?? null),
    formatPercent(row.anyperf?.cpu_percent ?? null),
    resultCell(row),
  ]);
  const judged = r.rows.filter((x) => x.met !== null);
  const out = [
    `anyperf bench: ${r.anyperf.version}, ${r.repeats} repeats × ${r.seconds} s${r.quick ? " (--quick)" : ""}, ${r.host.cores} cores, kernel ${r.host.kernel}, load average ${r.host.loadavg_start} → ${r.host.loadavg_end}, ${r.elapsed_s.toFixed(0)} s`,
    "",
    renderTable(head, rows),
    "",
    `${judged.filter((x) => x.met).length} of ${judged.length} measured targets met; ${r.rows.filter((x) => x.skipped).length} rows skipped, ${r.rows.filter((x) => !x.skipped && x.met === null && !(shownOnly(x) && x.ratio !== null) && !(x.target.kind === "figure-shown" && x.anyperf?.figure != null)).length} rows without a result.`,
  ];
  const skipped = r.rows.filter((x) => x.skipped);
  if (skipped.length) out.push("", "Skipped:", ...skipped.map((x) => `  ${x.workload}: ${x.skipped}`));
  const errors = r.rows.flatMap((x) =>
    [x.reference, x.anyperf].flatMap((s) => (s && s.errors.length ? [`  ${x.workload} / ${s.label} failed ${s.samples.filter((v) => v === null).length} of ${s.samples.length} runs: ${s.errors.join(" || ")}`] : [])),
  );
  if (errors.length) out.push("", "Failed runs:", ...errors);
  out.push(
    "",
    "How the figures are taken:",
    `  T = ${r.seconds} s per run; each repeat runs the two sides of a row back to back, the reference first in even repeats and anyperf first in odd ones.`,
    "  Figures are medians over the repeats (peak RSS: the highest); ratio = median over repeats of anyperf ÷ reference from the same repeat, (lowest–highest) of those.",
    "  CPU = user+system seconds of that side's processes (wait4 rusage, start-up and teardown included) ÷ T, or ÷ the run's own length where its row runs longer (-l T+N); 100 % = one core.",
    "  Loopback softirq work is charged to no process when the kernel accounts IRQ time separately, so CPU figures are lower bounds for both sides alike.",
    "  anyperf loopback runs sender and receiver in one process on the same cores a stock client+server pair shares: the same total work.",
    ...r.rows.filter((x) => !x.skipped).flatMap((x) => [
      `  ${x.workload} [CPU: ${x.cpu_scope}]${x.id !== "startup" && (x.anyperf?.samples.length ?? r.repeats) > r.repeats ? ` (${x.anyperf!.samples.length} repeats: a small effect next to the run-to-run spread)` : ""}`,
      ...(x.reference ? [`      reference: ${x.reference.how}`] : []),
      ...(x.anyperf ? [`      anyperf:   ${x.anyperf.how}`] : []),
    ]),
  );
  return out.join("\n");
}
