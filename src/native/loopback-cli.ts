import { parseArgs } from "node:util";
import { Plan } from "../plan.ts";
import { UserError } from "../errors.ts";
import { parseRate, parseSize } from "../units.ts";
import { cores } from "../engine/worker-pool.ts";
import { runLoopback } from "../loopback.ts";
import { Results } from "../report/result.ts";
import { textReport } from "../report/text.ts";
import { liveIntervalsCsv } from "../report/csv.ts";
import { attachProgress } from "../report/progress.ts";
import { checkOutputPath } from "../report/atomic-file.ts";
import type { TestRun } from "../engine/test-run.ts";
import { interruptedExitCode, shutdownSignal } from "../signals.ts";

export const LOOPBACK_USAGE = `usage: anyperf loopback [options]
  -t, --time S         measured seconds (default 5)
  -P, --parallel N     streams (default: number of cores)
  -u, --udp            UDP instead of TCP
  -6, --ipv6           over ::1 instead of 127.0.0.1
  -b, --rate R         per-stream rate: bits/s with K/M/G (100M), or packets/s (10000pps); 0 = unlimited
  -l, --length BYTES   TCP write size (default 128K) or UDP datagram size (default 1400)
      --rr REQ,RESP    request/response with these sizes (e.g. 1,1)
      --crr            connect/request/response/close per transaction
      --warmup S       warm-up seconds, not counted (default 0)
      --cooldown S     cool-down seconds, not counted (default 0)
  -i, --interval S     interval seconds (default 1)
      --workers N      data Workers (default min(2 x streams, cores))
      --json           one JSON document on stdout
      --csv FILE       interval rows as CSV
  every command also takes --http [ADDR:]PORT (live status endpoint) and --http-token TOKEN`;

const SINGLE_STREAM_WRITE = 1 << 20;

function num(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UserError(`--${name} ${v}: not a number; pass e.g. --${name} 5`, 2);
  return n;
}

/** argv → Plan and output choices for `anyperf loopback`. */
export function parseLoopbackArgs(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      time: { type: "string", short: "t" },
      parallel: { type: "string", short: "P" },
      udp: { type: "boolean", short: "u" },
      ipv6: { type: "boolean", short: "6" },
      rate: { type: "string", short: "b" },
      length: { type: "string", short: "l" },
      rr: { type: "string" },
      crr: { type: "boolean" },
      warmup: { type: "string" },
      cooldown: { type: "string" },
      interval: { type: "string", short: "i" },
      workers: { type: "string" },
      json: { type: "boolean" },
      csv: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const udp = values.udp ?? false;
  let req = 1, resp = 1;
  if (values.rr !== undefined) {
    const m = /^(\d+)(?:,(\d+))?$/.exec(values.rr);
    if (!m) throw new UserError(`--rr ${values.rr}: expected REQ,RESP byte sizes, e.g. --rr 1,1`, 2);
    req = Number(m[1]);
    resp = Number(m[2] ?? m[1]);
  }
  const rate = values.rate === undefined ? {} : parseRate(values.rate);
  const length = values.length === undefined ? undefined : parseSize(values.length, { base: 1024 });
  const streams = num("parallel", values.parallel, cores());
  const parsed = Plan.safeParse({
    transport: udp ? "udp" : "tcp",
    host: values.ipv6 ? "::1" : undefined,
    test: values.crr ? "crr" : values.rr !== undefined ? "rr" : "stream",
    streams,
    workers: values.workers === undefined ? undefined : num("workers", values.workers, 1),
    durationS: num("time", values.time, 5),
    warmupS: num("warmup", values.warmup, 0),
    cooldownS: num("cooldown", values.cooldown, 0),
    intervalS: num("interval", values.interval, 1),
    // Runtime notes §4: one stream needs big writes to keep up with C tools; many streams do best at 128 KiB.
    bufferBytes: !udp ? (length ?? (streams === 1 ? SINGLE_STREAM_WRITE : undefined)) : undefined,
    datagramBytes: udp && length !== undefined ? length : undefined,
    bitsPerSecond: rate.bitsPerSecond ?? 0,
    packetsPerSecond: rate.packetsPerSecond ?? 0,
    requestBytes: req,
    responseBytes: resp,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`bad option value: ${issue.path.join(".") || "plan"}: ${issue.message}`, 2);
  }
  return { plan: parsed.data, json: values.json ?? false, csv: values.csv, help: values.help ?? false };
}

export async function loopbackMain(argv: string[], hooks: { onRun?: (run: TestRun) => void } = {}): Promise<number> {
  const opts = parseLoopbackArgs(argv);
  if (opts.help) {
    console.log(LOOPBACK_USAGE);
    return 0;
  }
  if (opts.csv !== undefined) checkOutputPath("--csv", opts.csv);
  let detach = () => {};
  let csv: { close(): void } | undefined;
  const signal = shutdownSignal();
  let results;
  try {
    results = await runLoopback(opts.plan, {
      signal,
      onRun: (r) => {
        if (!opts.json) detach = attachProgress(r);
        if (opts.csv !== undefined) csv = liveIntervalsCsv(opts.csv, r);
        hooks.onRun?.(r);
      },
    });
  } finally {
    detach();
    csv?.close();
  }
  Results.parse(results);
  console.log(opts.json ? JSON.stringify(results, null, 2) : textReport(results));
  return interruptedExitCode(signal) ?? (results.errors.length > 0 ? 1 : 0);
}
