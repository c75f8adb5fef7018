import { parseArgs } from "node:util";
import { OUTPUT_USAGE, PLAN_OPTIONS, num, planFromValues, planUsage } from "./plan-args.ts";
import { cores } from "../engine/worker-pool.ts";
import { runLoopback } from "../loopback.ts";
import type { TestRun } from "../engine/test-run.ts";
import { ensureFdLimit, fdsNeeded } from "../host/fd-limit.ts";
import { negativeValues, valuedFlags } from "../negative-values.ts";
import { runProcedure } from "../procedure/run-procedure.ts";
import { PROCEDURE_USAGE, gridPoints, pointArgs, takeProcedureOptions } from "../procedure/options.ts";

export const LOOPBACK_USAGE = `usage: anyperf loopback [options]
${planUsage("number of cores")}
  -6, --ipv6           over ::1 instead of 127.0.0.1
      --workers N      data Workers (default min(2 x streams, cores))
${PROCEDURE_USAGE}
${OUTPUT_USAGE}`;

/** `anyperf loopback`'s options, as node:util parseArgs reads them. */
export const LOOPBACK_OPTIONS = { ...PLAN_OPTIONS, ipv6: { type: "boolean", short: "6" }, workers: { type: "string" } } as const;

/** Options that take a value: a negative number after one is its value (to be range-checked), not an option. */
const LOOPBACK_VALUED = valuedFlags(LOOPBACK_OPTIONS);

/** argv → Plan and output choices for `anyperf loopback`. */
export function parseLoopbackArgs(argv: string[]) {
  const { values } = parseArgs({
    args: negativeValues(argv, LOOPBACK_VALUED),
    strict: true,
    allowPositionals: false,
    options: LOOPBACK_OPTIONS,
  });
  const workers = values.workers === undefined ? undefined : num("workers", values.workers, 1);
  const plan = planFromValues(values, { streams: cores() }, { workers, host: values.ipv6 ? "::1" : undefined });
  return { plan, json: values.json ?? false, csv: values.csv, push: values.push, pushgateway: values.pushgateway, help: values.help ?? false };
}

export async function loopbackMain(argv: string[], hooks: { onRun?: (run: TestRun) => void } = {}): Promise<number> {
  const proc = takeProcedureOptions(argv);
  const opts = parseLoopbackArgs(proc.rest);
  if (opts.help) {
    console.log(LOOPBACK_USAGE);
    return 0;
  }
  // The open-file limit is raised once, up front, for the largest point of a sweep.
  const plans = gridPoints(proc.sweeps).map((pt) => parseLoopbackArgs([...proc.rest, ...pointArgs(pt)]).plan);
  const need = (p: (typeof plans)[number]) => fdsNeeded(p.streams, p.test, { sends: true, receives: true });
  const widest = plans.reduce((a, p) => (need(p) > need(a) ? p : a));
  // Both ends of every flow are this process's: past the limit, two processes hold half each.
  await ensureFdLimit(need(widest), `-P ${widest.streams}`, `run the two ends as two processes ('anyperf serve' and 'anyperf client 127.0.0.1 -P ${widest.streams}')`);
  const prepare = (a: string[]) => {
    const { plan } = parseLoopbackArgs(a);
    return (h: Parameters<typeof runLoopback>[1]) => runLoopback(plan, h);
  };
  return runProcedure(proc, { mode: "loopback", peer: opts.plan.host, out: opts, prepare }, hooks.onRun);
}
