import type { Diagnosis } from "./schema.ts";

/** The diagnosis as the text report prints it: the verdict, then each line of evidence indented. */
export function diagnosisLines(d: Diagnosis): string[] {
  return [`diagnosis: ${d.verdict}`, ...d.evidence.map((e) => `  ${e}`)];
}
