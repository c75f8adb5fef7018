/**
 * `--json` figures rounded to what they mean, not to the float noise of the arithmetic behind them
 * (`bdp_bytes 335257.9167`, `mode_percent 56.99999999999999`): bytes, bits/s and bytes/s are whole numbers, a
 * percent (a `*_percent` field, or a CPU mode's share: user, system, softirq... of a host, a core or the process)
 * has two decimals, a time in seconds, milliseconds or microseconds stops at the microsecond's hundredth. Whole
 * numbers and every other field are left as they are. Only the documents a user reads are rounded (`--json`, and
 * `--push`, which sends what `--json` prints): the history file, the status endpoint and the formulas keep the exact
 * values.
 */
const CPU_MODES = new Set(["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice", "busy", "total"]);

function decimals(key: string): number | undefined {
  if (/(bytes|_bps|BytesPerSecond)$/i.test(key)) return 0;
  if (/percent$/i.test(key) || CPU_MODES.has(key)) return 2;
  if (/_us$/.test(key)) return 2;
  if (/_ms$/.test(key)) return 5;
  if (/(^seconds|_s|^start|^end)$/.test(key)) return 8;
  return undefined;
}

/**
 * A figure whose own key names no unit takes its parent's: the statistics of one quantity (`latency_us: { p50, max }`,
 * `--repeat`'s `throughput_bps: { median, min, max }`) are in that quantity's unit.
 */
function roundedDeep(v: unknown, key: string, inherited: number | undefined): unknown {
  const d = decimals(key) ?? inherited;
  if (Array.isArray(v)) return v.map((x) => roundedDeep(x, key, inherited));
  // A value that says how it is written (a Date) is left to JSON.stringify.
  if (v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON !== "function") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundedDeep(x, k, d)]));
  if (typeof v !== "number" || Number.isInteger(v) || !Number.isFinite(v) || d === undefined) return v;
  const f = 10 ** d;
  return Math.round(v * f) / f;
}

/** The document as `--json` prints it (indented two spaces; `indent` 0: on one line), its figures rounded as above. */
export function jsonDocument(value: unknown, indent = 2): string {
  return JSON.stringify(roundedDeep(value, "", undefined), null, indent);
}
