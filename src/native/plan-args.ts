import { Plan, type PlanInput } from "../plan.ts";
import { UserError } from "../errors.ts";
import { parseRate, parseSize } from "../units.ts";
import { optionError } from "../option-error.ts";

/**
 * The test-shape options every native command shares (loopback, client): their parseArgs table, their help lines,
 * and the step from parsed values to a Plan.
 */
export const PLAN_OPTIONS = {
  time: { type: "string", short: "t" },
  bytes: { type: "string", short: "n" },
  parallel: { type: "string", short: "P" },
  udp: { type: "boolean", short: "u" },
  rate: { type: "string", short: "b" },
  length: { type: "string", short: "l" },
  window: { type: "string", short: "w" },
  rr: { type: "string" },
  crr: { type: "boolean" },
  warmup: { type: "string" },
  cooldown: { type: "string" },
  interval: { type: "string", short: "i" },
  json: { type: "boolean" },
  csv: { type: "string" },
  push: { type: "string" },
  pushgateway: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export interface PlanValues {
  time?: string;
  bytes?: string;
  parallel?: string;
  udp?: boolean;
  rate?: string;
  length?: string;
  window?: string;
  rr?: string;
  crr?: boolean;
  warmup?: string;
  cooldown?: string;
  interval?: string;
}

/** `{streams}` in the -P line is the command's own default. */
export function planUsage(streams: string): string {
  return `  -t, --time S         measured seconds (default 5)
  -n, --bytes BYTES    send this many bytes in total (K/M/G), then stop, instead of -t
  -P, --parallel N     streams (default: ${streams})
  -u, --udp            UDP instead of TCP
  -b, --rate R         per-stream rate: bits/s with K/M/G (100M), or packets/s (10000pps); 0 = unlimited
  -l, --length BYTES   TCP write size (default 128K) or UDP datagram size (default 1400)
  -w, --window BYTES   socket buffer (SO_SNDBUF and SO_RCVBUF, K/M) on every data socket of both ends
      --rr REQ,RESP    request/response with these sizes (e.g. 1,1)
      --crr            connect/request/response/close per transaction
      --warmup S       warm-up seconds, not counted (default 0)
      --cooldown S     cool-down seconds, not counted (default 0)
  -i, --interval S     interval seconds (default 1)`;
}

export const OUTPUT_USAGE = `      --json           one JSON document on stdout
      --csv FILE       interval rows as CSV
      --push URL       POST the results document (JSON) to URL once done (3 retries)
      --pushgateway URL  PUT the final figures to a Prometheus Pushgateway (job anyperf, instance pod/node/host)
  every command also takes --http [ADDR:]PORT (live status endpoint), --http-token TOKEN (or --http-token-file F,
  or ANYPERF_HTTP_TOKEN), --label KEY=VALUE (repeatable: on every /metrics series and in the results) and --linger S
  (how long the endpoint stays up for /results after a client run: default 30 s at a terminal, 5 s otherwise)`;

/** The flag that sets each Plan field, for messages. */
const PLAN_FLAGS: Record<string, string> = {
  streams: "--parallel",
  workers: "--workers",
  durationS: "--time",
  bytes: "--bytes",
  warmupS: "--warmup",
  cooldownS: "--cooldown",
  intervalS: "--interval",
  bufferBytes: "--length",
  datagramBytes: "--length",
  bitsPerSecond: "--rate",
  packetsPerSecond: "--rate",
  requestBytes: "--rr",
  responseBytes: "--rr",
  socket: "--window",
};

const SINGLE_STREAM_WRITE = 1 << 20;
/** setsockopt takes an int; 512M is iperf3's ceiling for -w too (the kernel caps it lower, at net.core.*mem_max). */
export const MAX_WINDOW_BYTES = 512 << 20;

export function num(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  // Number("") is 0: an empty value would silently pass as zero.
  if (v.trim() === "" || !Number.isFinite(n)) throw new UserError(`--${name} ${v.trim() === "" ? "''" : v}: not a number; pass e.g. --${name} 5`, 2);
  return n;
}

export function planFromValues(values: PlanValues, defaults: { streams: number }, extra: Partial<PlanInput> = {}): Plan {
  const udp = values.udp ?? false;
  let req = 1, resp = 1;
  if (values.rr !== undefined) {
    const m = /^(\d+)(?:,(\d+))?$/.exec(values.rr);
    if (!m) throw new UserError(`--rr ${values.rr}: expected REQ,RESP byte sizes, e.g. --rr 1,1`, 2);
    req = Number(m[1]);
    resp = Number(m[2] ?? m[1]);
  }
  if (values.bytes !== undefined && values.time !== undefined) throw new UserError("-n and -t both given: pass one (bytes or seconds)", 2);
  if (values.bytes !== undefined && (values.rr !== undefined || values.crr)) throw new UserError("-n counts bulk bytes: drop it for --rr/--crr, or use -t", 2);
  const rate = values.rate === undefined ? {} : parseRate(values.rate, { option: "--rate" });
  const length = values.length === undefined ? undefined : parseSize(values.length, { base: 1024, option: "--length" });
  const window = values.window === undefined ? undefined : parseSize(values.window, { base: 1024, option: "--window" });
  if (window !== undefined && !(window >= 1 && window <= MAX_WINDOW_BYTES)) throw new UserError(`--window ${values.window}: pass a socket buffer size from 1 byte to 512M, e.g. -w 256K`, 2);
  const bytes = values.bytes === undefined ? 0 : parseSize(values.bytes, { base: 1024, option: "-n" });
  if (values.bytes !== undefined && !(bytes > 0)) throw new UserError(`-n ${values.bytes}: needs a byte count above 0, e.g. -n 100M`, 2);
  const streams = num("parallel", values.parallel, defaults.streams);
  const input = {
    transport: udp ? "udp" : "tcp",
    test: values.crr ? "crr" : values.rr !== undefined ? "rr" : "stream",
    streams,
    durationS: num("time", values.time, 5),
    bytes: Math.round(bytes),
    warmupS: num("warmup", values.warmup, 0),
    cooldownS: num("cooldown", values.cooldown, 0),
    intervalS: num("interval", values.interval, 1),
    // Measured on Bun 1.4.5: one stream needs writes of 256 KiB or more to keep up with iperf3 (64 KiB costs 25 %);
    // many streams do best at 128 KiB.
    bufferBytes: !udp ? (length ?? (streams === 1 ? SINGLE_STREAM_WRITE : undefined)) : undefined,
    datagramBytes: udp && length !== undefined ? length : undefined,
    bitsPerSecond: rate.bitsPerSecond ?? 0,
    packetsPerSecond: rate.packetsPerSecond ?? 0,
    requestBytes: req,
    responseBytes: resp,
    socket: window === undefined ? {} : { sendBuffer: window, recvBuffer: window },
    ...extra,
  };
  const parsed = Plan.safeParse(input);
  if (!parsed.success) {
    const given = { bitsPerSecond: values.rate, packetsPerSecond: values.rate, bufferBytes: values.length, datagramBytes: values.length, requestBytes: values.rr, responseBytes: values.rr, bytes: values.bytes };
    throw optionError(parsed.error, PLAN_FLAGS, { input, given }) ?? new UserError(`bad option value: ${parsed.error.issues[0]!.message}; see --help`, 2);
  }
  return parsed.data;
}
