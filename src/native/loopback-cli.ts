import { parseArgs } from "node:util";
import { OUTPUT_USAGE, PLAN_OPTIONS, num, planFromValues, planUsage } from "./plan-args.ts";
import { cores } from "../engine/worker-pool.ts";
import { runLoopback } from "../loopback.ts";
import type { TestRun } from "../engine/test-run.ts";
import { runAndReport } from "./run-report.ts";
import { ensureFdLimit, loopbackFdsNeeded } from "../host/fd-limit.ts";
import { negativeValues, valuedFlags } from "../negative-values.ts";

export const LOOPBACK_USAGE = `usage: anyperf loopback [options]
${planUsage("number of cores")}
  -6, --ipv6           over ::1 instead of 127.0.0.1
      --workers N      data Workers (default min(2 x streams, cores))
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
  return { plan, json: values.json ?? false, csv: values.csv, help: values.help ?? false };
}

export async function loopbackMain(argv: string[], hooks: { onRun?: (run: TestRun) => void } = {}): Promise<number> {
  const opts = parseLoopbackArgs(argv);
  if (opts.help) {
    console.log(LOOPBACK_USAGE);
    return 0;
  }
  await ensureFdLimit(loopbackFdsNeeded(opts.plan.streams, opts.plan.transport), `-P ${opts.plan.streams}`);
  return runAndReport((h) => runLoopback(opts.plan, h), opts, hooks.onRun);
}
