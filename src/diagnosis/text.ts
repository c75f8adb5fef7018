import { formatBits, formatFixed } from "../units.ts";
import type { Diagnosis } from "./schema.ts";

/**
 * The diagnosis as the text report prints it: the verdict, each line of evidence indented, then the path's figures
 * from the sending sockets when they were read (whatever the verdict, as --json has them).
 */
export function diagnosisLines(d: Diagnosis): string[] {
  const path: string[] = [];
  if (d.bottleneck_bps !== undefined) path.push(`bottleneck ${formatBits(d.bottleneck_bps)}`);
  if (d.queueing_delay_us !== undefined) path.push(`queueing delay ${formatFixed(d.queueing_delay_us / 1000, 2)} ms`);
  return [`diagnosis: ${d.verdict}`, ...d.evidence.map((e) => `  ${e}`), ...(path.length ? [`  path: ${path.join(", ")}`] : [])];
}
