import { StatusDocument } from "./schema.ts";

/**
 * Polls GET /status at a fixed rate, as a user's dashboard would: the bench runs it next to a test to show that
 * polling costs no throughput, and the integration tests read the run through it. Bounded by `durationMs` and
 * `signal`; every answer is checked against the schema.
 */

export interface PollOptions {
  /** Requests per second (10 for the check). */
  hz: number;
  durationMs: number;
  token?: string;
  signal?: AbortSignal;
  /** Each valid document, in order. */
  onDocument?: (doc: StatusDocument) => void;
}

export interface PollReport {
  requests: number;
  /** Network errors, non-200 answers and time-outs (a request gets one period plus a second). */
  failures: number;
  /** 200 answers that did not match the schema. */
  invalid: number;
  /** Round-trip time of each successful request, ms, in the order sent. */
  latenciesMs: number[];
}

export async function pollStatus(baseUrl: string, opts: PollOptions): Promise<PollReport> {
  const url = new URL("status", baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  const headers: Record<string, string> = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
  const period = 1000 / opts.hz;
  const t0 = performance.now();
  const report: PollReport = { requests: 0, failures: 0, invalid: 0, latenciesMs: [] };
  for (let k = 0; ; k++) {
    const due = t0 + k * period;
    if (due - t0 >= opts.durationMs || opts.signal?.aborted) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (opts.signal?.aborted) break;
    report.requests++;
    const sent = performance.now();
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(period + 1000) });
      if (res.status !== 200) {
        report.failures++;
        await res.body?.cancel();
        continue;
      }
      const body: unknown = await res.json();
      report.latenciesMs.push(performance.now() - sent);
      const doc = StatusDocument.safeParse(body);
      if (!doc.success) report.invalid++;
      else opts.onDocument?.(doc.data);
    } catch {
      report.failures++;
    }
  }
  return report;
}
