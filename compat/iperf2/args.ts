import { TCP_BURST_HEADER } from "../../interop/iperf2/tcp-burst.ts";
import { ISOCH_DATAGRAM_MIN } from "../../interop/iperf2/isoch-frames.ts";
import { parseArgs } from "node:util";
import { UserError } from "../../src/errors.ts";
import { optionError } from "../../src/option-error.ts";
import { negativeValues, valuedFlags } from "../../src/negative-values.ts";
import { MAX_DATAGRAM_BYTES } from "../../src/stream-spec.ts";
import { type Iperf2Plan, Iperf2Plan as PlanSchema } from "./plan.ts";
import { type FormatLetter, FORMAT_LETTERS, parseRate, parseSuffixed } from "./units.ts";

/** iperf 2.1.8's options (the subset anyperf honours, plus a few accepted and ignored so scripts keep working). */
export const OPTIONS = {
  server: { type: "boolean", short: "s" },
  client: { type: "string", short: "c" },
  port: { type: "string", short: "p" },
  udp: { type: "boolean", short: "u" },
  bind: { type: "string", short: "B" },
  interval: { type: "string", short: "i" },
  enhanced: { type: "boolean", short: "e" },
  daemon: { type: "boolean", short: "D" },
  time: { type: "string", short: "t" },
  num: { type: "string", short: "n" },
  bandwidth: { type: "string", short: "b" },
  len: { type: "string", short: "l" },
  window: { type: "string", short: "w" },
  tradeoff: { type: "boolean", short: "r" },
  dualtest: { type: "boolean", short: "d" },
  reverse: { type: "boolean", short: "R" },
  "full-duplex": { type: "boolean" },
  parallel: { type: "string", short: "P" },
  listenport: { type: "string", short: "L" },
  reportstyle: { type: "string", short: "y" },
  format: { type: "string", short: "f" },
  compatibility: { type: "boolean", short: "C" },
  "peer-detect": { type: "boolean", short: "X" },
  tos: { type: "string", short: "S" },
  nodelay: { type: "boolean", short: "N" },
  mss: { type: "string", short: "M" },
  "tcp-congestion": { type: "string", short: "Z" },
  ipv6_domain: { type: "boolean", short: "V" },
  singleclient: { type: "boolean", short: "1" },
  "no-udp-fin": { type: "boolean" },
  "txstart-time": { type: "string" },
  "trip-times": { type: "boolean" },
  ipg: { type: "string" },
  "tcp-write-times": { type: "boolean" },
  "tcp-quickack": { type: "boolean" },
  "bounceback-hold": { type: "string" },
  "bounceback-period": { type: "string" },
  "bounceback-request": { type: "string" },
  "bounceback-reply": { type: "string" },
  "bounceback-no-quickack": { type: "boolean" },
  "sum-only": { type: "boolean" },
  "hide-ips": { type: "boolean" },
  output: { type: "string", short: "o" },
  print_mss: { type: "boolean", short: "m" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
  // accepted for compatibility, no effect here
  realtime: { type: "boolean", short: "z" },
  ttl: { type: "string", short: "T" },
  reportexclude: { type: "string", short: "x" },
} as const;

const VALUED = valuedFlags(OPTIONS);

/** The flag that sets each plan field, for messages. */
const PLAN_FLAGS: Record<string, string> = {
  port: "-p",
  bind: "-B",
  intervalS: "-i",
  window: "-w",
  len: "-l",
  mss: "-M",
  congestion: "-Z",
  tos: "-S",
  output: "-o",
  timeLimitS: "-t",
  host: "-c",
  "amount.seconds": "-t",
  "amount.bytes": "-n",
  rate: "-b",
  parallel: "-P",
  listenPort: "-L",
  "bounceback.size": "--bounceback-request",
  "bounceback.replySize": "--bounceback-reply",
  "bounceback.burst": "--bounceback",
  "bounceback.periodS": "--bounceback-period",
  "bounceback.holdUs": "--bounceback-hold",
  txStartS: "--txstart-time",
  connectOnly: "--connect-only",
  "histograms.binUs": "--histograms",
  "histograms.width": "--histograms",
  "histograms.bins": "--histograms",
};

/** -S accepts numbers (0x10, 16, 020) and the DSCP/TOS names iperf lists. */
const TOS_NAMES: Record<string, number> = {
  lowdelay: 0x10, throughput: 0x08, reliability: 0x04, ef: 0xb8, le: 0x04, nqb: 0x2d << 2, nqb2: 0x2d << 2,
  ...Object.fromEntries([0, 1, 2, 3, 4, 5, 6, 7].map((n) => [`cs${n}`, n << 5])),
  ...Object.fromEntries([1, 2, 3, 4].flatMap((c) => [1, 2, 3].map((d) => [`af${c}${d}`, ((c << 3) | (d << 1)) << 2]))),
};

export type Iperf2Command = { kind: "help" } | { kind: "version" } | { kind: "run"; plan: Iperf2Plan };

function int(text: string, what: string): number {
  const n = Number(text.trim());
  if (!Number.isInteger(n)) throw new UserError(`${what} "${text}" is not a whole number`);
  return n;
}

function seconds(text: string, what: string): number {
  const n = Number(text.trim());
  if (!Number.isFinite(n) || n < 0) throw new UserError(`${what} "${text}" is not a number of seconds`);
  return n;
}

function tos(text: string): number {
  const named = TOS_NAMES[text.toLowerCase()];
  if (named !== undefined) return named;
  const n = text.startsWith("0x") || text.startsWith("0X") ? Number.parseInt(text, 16) : text.startsWith("0") && text.length > 1 ? Number.parseInt(text, 8) : Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 255) throw new UserError(`-S "${text}" is not a TOS byte: use 0..255, 0x.. or a name like ef, af11, cs1`);
  return n;
}

/**
 * -B host, host:port, [v6]:port. A device (`host%dev`, which stock binds with SO_BINDTODEVICE) is refused by name:
 * our sockets take none, and a test bound to the address alone is not the one asked for.
 */
function bindAddress(text: string): { host: string; port?: number } {
  if (text.includes("%")) throw new UserError(`iperf: -B ${text}: anyperf does not bind to a device (SO_BINDTODEVICE): drop %${text.split("%")[1]} and bind to the address (-B ${text.split("%")[0]})`);
  const v6 = /^\[(.+)\](?::(\d+))?$/.exec(text);
  if (v6) return { host: v6[1]!, ...(v6[2] ? { port: int(v6[2], "-B port") } : {}) };
  const parts = text.split(":");
  if (parts.length === 2) return { host: parts[0]!, port: int(parts[1]!, "-B port") };
  return { host: text };
}

/**
 * iperf 2.1.8 / 2.2 options anyperf does not run: refused by name, so nobody mistakes the test that would run without
 * them (a plain stream) for the one asked for.
 */
const NOT_IMPLEMENTED: Record<string, string> = {
  // 2.1.8 (whose client anyperf's speaks) has no such option: it says "unrecognized option" and runs a plain test.
  "--working-load": "a 2.2 client's load streams beside the test",
  "--working-load-cca": "a 2.2 client's load streams beside the test",
  // Stock builds it only with ./configure --enable-udp-l4s (Debian's is not: there it runs a plain stream).
  "--udp-l4s": "iperf 2's L4S flow, built only with --enable-udp-l4s",
  "--udp-l4s-video": "iperf 2's L4S flow, built only with --enable-udp-l4s",
};

function refuseNotImplemented(argv: string[]): void {
  const server = argv.some((a) => a === "-s" || a === "--server");
  for (const a of argv) {
    const name = a.split("=")[0]!;
    const what = NOT_IMPLEMENTED[name];
    if (what) throw new UserError(`iperf: ${name} (${what}) is not implemented in anyperf's client: drop it (without it the test is a plain stream, not the one asked for)`);
    if (server && (name === "--histograms" || name === "--tcp-write-times")) {
      throw new UserError(`iperf: ${name} on a server (its latency histograms) is not implemented in anyperf: drop it; a client's --histograms times its own writes`);
    }
  }
}

/**
 * `--NAME[=VALUE]`: options whose value is optional (--bounceback, --connect-only, --histograms, --isochronous), which
 * parseArgs cannot express: taken out here (the value, or null without one; undefined when absent), the rest goes to
 * parseArgs.
 */
function takeOptional(argv: string[], name: string): { argv: string[]; value: string | null | undefined } {
  let value: string | null | undefined;
  const rest = argv.filter((a) => {
    if (a === name) value = null;
    else if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
    else return true;
    return false;
  });
  return { argv: rest, value };
}

/** A --isochronous rate as iperf 2 reads it (bitorbyte_atof): k/m/g bits, K/M/G bytes (x 8), decimal multiples. */
function isochRate(text: string, spec: string): number {
  const m = /^(\d+(?:\.\d*)?|\.\d+)([kmgKMG]?)$/.exec(text);
  if (!m) throw new UserError(`iperf: --isochronous=${spec}: ${text} is not a rate (e.g. 20m, 2.5M)`);
  const scale = { "": 1, k: 1e3, m: 1e6, g: 1e9, K: 8e3, M: 8e6, G: 8e9 }[m[2] as "" | "k"]!;
  return Number(m[1]) * scale;
}

/**
 * `--isochronous[=FPS:MEAN,STDDEV]` (60 frames/s of 20 Mbit/s, no deviation, without a value) and `--ipg MS`, the
 * gap between a frame's datagrams (iperf 2's default: none to speak of).
 */
function isochronous(spec: string | null, ipg: string | undefined): { perSecond: number; meanBps: number; stddevBps: number; ipgMs: number } {
  const ipgMs = ipg === undefined ? 0 : Number(ipg);
  if (!(ipgMs >= 0 && ipgMs <= 1000)) throw new UserError(`iperf: --ipg ${ipg}: the gap between a frame's datagrams is 0 to 1000 ms`);
  if (spec === null) return { perSecond: 60, meanBps: 20e6, stddevBps: 0, ipgMs };
  const m = /^([^:]+):([^,]+)(?:,(.+))?$/.exec(spec);
  if (!m) throw new UserError(`iperf: --isochronous=${spec}: write it FPS:MEAN[,STDDEV], e.g. --isochronous=60:20m,1m`);
  const perSecond = Number(m[1]);
  if (!(perSecond > 0 && perSecond <= 100_000)) throw new UserError(`iperf: --isochronous=${spec}: the frame rate is 1 to 100000 frames/s`);
  const meanBps = isochRate(m[2]!, spec);
  if (!(meanBps > 0)) throw new UserError(`iperf: --isochronous=${spec}: the mean must be more than zero, as stock requires`);
  return { perSecond, meanBps, stddevBps: m[3] !== undefined ? isochRate(m[3], spec) : 0, ipgMs };
}

/**
 * A client's write-time histogram as 2.1.8 reads --histograms: bins of 100 µs, 10000 of them, confidence bounds at 5
 * and 95 % without a value; else the bin width with its unit (`u` µs, `m` ms), then the bin count and the bounds.
 */
function histograms(spec: string | null): { binUs: number; unit: "us" | "ms"; width: number; bins: number; lowerCi: number; upperCi: number } {
  if (spec === null) return { binUs: 100, unit: "us", width: 100, bins: 10_000, lowerCi: 5, upperCi: 95 };
  const [w, bins, lower, upper] = spec.split(",");
  const m = /^(\d+)([um])$/.exec(w ?? "");
  if (!m) throw new UserError(`iperf: --histograms=${spec}: the bin width takes its unit, u (µs) or m (ms): e.g. --histograms=100u,10000`);
  const width = int(m[1]!, "--histograms bin width");
  const unit = m[2] === "u" ? ("us" as const) : ("ms" as const);
  const ci = (t: string | undefined, d: number, what: string) => {
    if (t === undefined) return d;
    const n = Number(t);
    if (!(n >= 0 && n <= 100)) throw new UserError(`iperf: --histograms=${spec}: the ${what} bound is a percentage, 0 to 100`);
    return n;
  };
  return {
    binUs: unit === "us" ? width : width * 1000,
    unit,
    width,
    bins: bins !== undefined ? int(bins, "--histograms bins") : 10_000,
    lowerCi: ci(lower, 5, "lower"),
    upperCi: ci(upper, 95, "upper"),
  };
}

/** A --bounceback-* option without --bounceback itself: stock ignores it, so it is refused here rather than dropped. */
const BOUNCEBACK_ONLY = ["bounceback-hold", "bounceback-period", "bounceback-request", "bounceback-reply", "bounceback-no-quickack"] as const;

/**
 * The bounceback test, as 2.1.8 (2.2's reply size too) resolves it: the request is --bounceback-request, else -l,
 * else 100 bytes; the reply the request's size unless given; a burst of N (10 without a value; a value of 0 or less
 * is 10, as stock warns) per period (1 s by default, which also makes -i 1 unless -i was given; a period of 0 or
 * below 10 µs: requests back to back, one per burst unless N).
 */
function bounceback(v: Record<string, string | boolean | undefined>, burst: number | null | undefined, len: number | undefined) {
  if (burst === undefined) {
    const stray = BOUNCEBACK_ONLY.find((k) => v[k] !== undefined);
    if (stray) throw new UserError(`iperf: --${stray} without --bounceback: add --bounceback, or drop it`);
    return undefined;
  }
  const str = (k: string) => v[k] as string | undefined;
  const size = str("bounceback-request") !== undefined ? Math.floor(parseSuffixed(str("bounceback-request")!, "--bounceback-request")) : (len ?? 100);
  const periodText = str("bounceback-period");
  const periodS = periodText === undefined ? 1 : seconds(periodText, "--bounceback-period");
  const periodic = periodS > 1e-5;
  return {
    size,
    replySize: str("bounceback-reply") !== undefined ? Math.floor(parseSuffixed(str("bounceback-reply")!, "--bounceback-reply")) : size,
    burst: burst === null ? (periodic ? 10 : 1) : burst > 0 ? burst : 10,
    periodS: periodic ? periodS : 0,
    holdUs: str("bounceback-hold") !== undefined ? Math.floor(seconds(str("bounceback-hold")!, "--bounceback-hold") * 1000) : 0,
    quickAck: v["bounceback-no-quickack"] !== true,
    defaultInterval: periodText === undefined,
  };
}

/** What a bounceback test cannot be combined with here, each in one line (stock refuses -u itself). */
function refuseWithBounceback(p: Extract<Iperf2Plan, { role: "client" }>, lenAndRequest: boolean): void {
  const bad: [boolean, string, string][] = [
    [p.udp, "-u", "stock iperf 2 refuses it too: bounceback is TCP only"],
    [p.parallel > 1, "-P", "anyperf runs one bounceback connection: drop -P"],
    [p.reverse || p.fullDuplex || p.dual || p.tradeoff, "-R/--full-duplex/-d/-r", "a bounceback test goes both ways already: drop it"],
    [p.amount.kind === "bytes", "-n", "anyperf ends a bounceback test on -t only: use -t"],
    [p.rate !== null, "-b", "a bounceback test is paced by --bounceback-period: drop -b"],
    [p.compat || p.peerDetect, "-C/-X", "a bounceback connection carries no client header: drop it"],
    [lenAndRequest && p.lenSet && p.len !== p.bounceback!.size, "-l with --bounceback-request", "give the request size once (--bounceback-request)"],
  ];
  const hit = bad.find(([on]) => on);
  if (hit) throw new UserError(`iperf: --bounceback with ${hit[1]}: ${hit[2]}`);
}

/**
 * --txstart-time runs here for a TCP stream we send (-P too): the header's start time and a wait before the first
 * write, as stock. Where else stock applies it (UDP, -R, --full-duplex, -r/-d) it is refused in one line.
 */
function refuseWithTxStart(p: Extract<Iperf2Plan, { role: "client" }>): void {
  const bad: [boolean, string][] = [
    [p.udp, "-u"],
    [p.reverse || p.fullDuplex, "-R/--full-duplex"],
    [p.dual || p.tradeoff, "-d/-r"],
    [p.bounceback !== undefined, "--bounceback"],
    [p.compat, "-C (no header carries the start time)"],
  ];
  const hit = bad.find(([on]) => on);
  if (hit) throw new UserError(`iperf: --txstart-time with ${hit[1]}: anyperf starts only a TCP stream it sends at a given time: drop one of them`);
}

/** What --connect-only cannot carry here, in one line (stock refuses -u itself). */
function refuseWithConnectOnly(p: Extract<Iperf2Plan, { role: "client" }>, interval: boolean): void {
  const bad: [boolean, string][] = [
    [p.udp, "-u (stock refuses it too: a handshake is TCP)"],
    [p.reverse || p.fullDuplex || p.dual || p.tradeoff, "-R/--full-duplex/-d/-r"],
    [p.bounceback !== undefined || p.txStartS !== undefined, "--bounceback/--txstart-time"],
    [interval, "-i (stock's connects on a period; anyperf makes them back to back)"],
  ];
  const hit = bad.find(([on]) => on);
  if (hit) throw new UserError(`iperf: --connect-only with ${hit[1]}: drop one of them`);
}

/** Frames are what our client sends forward: the rest is refused in one line (-b as stock refuses it). */
function refuseWithIsochronous(p: Extract<Iperf2Plan, { role: "client" }>, rateGiven: boolean): void {
  const bad: [boolean, string][] = [
    [rateGiven, "-b (stock refuses it too: the frames set the rate)"],
    [p.reverse || p.fullDuplex || p.dual || p.tradeoff, "-R/--full-duplex/-d/-r (anyperf sends frames forward only)"],
    [p.bounceback !== undefined || p.connectOnly !== undefined || p.txStartS !== undefined, "--bounceback/--connect-only/--txstart-time"],
  ];
  const hit = bad.find(([on]) => on);
  if (hit) throw new UserError(`iperf: --isochronous with ${hit[1]}: drop one of them`);
}

/** Write times are our own TCP writes': what sends nothing here, or not through them, is refused in one line. */
function refuseWithWriteTimes(p: Extract<Iperf2Plan, { role: "client" }>, flag: string): void {
  const bad: [boolean, string][] = [
    [p.udp, "-u"],
    [p.reverse || p.fullDuplex || p.dual || p.tradeoff, "-R/--full-duplex/-d/-r"],
    [p.bounceback !== undefined || p.connectOnly !== undefined, "--bounceback/--connect-only"],
  ];
  const hit = bad.find(([on]) => on);
  if (hit) throw new UserError(`iperf: ${flag} with ${hit[1]}: anyperf times the writes of a TCP stream it sends (as 2.1.8 does): drop one of them`);
}

/** Turns `anyperf iperf` arguments (without the leading "iperf") into a checked plan, or help/version. */
export function parseIperf2Args(argv: string[]): Iperf2Command {
  refuseNotImplemented(argv);
  const bb = takeOptional(argv, "--bounceback");
  const co = takeOptional(bb.argv, "--connect-only");
  const hist = takeOptional(co.argv, "--histograms");
  const spaced = argv.findIndex((a, i) => a === "--isochronous" && /^\d[^-]*:/.test(argv[i + 1] ?? ""));
  if (spaced >= 0) {
    throw new UserError(`iperf: --isochronous takes its value after '=': --isochronous=${argv[spaced + 1]} (stock ignores a value after a space and runs 60:20m)`);
  }
  const isoch = takeOptional(hist.argv, "--isochronous");
  argv = isoch.argv;
  let parsed;
  try {
    // iperf 2's getopt takes "-t -5" as a value; parseArgs would call it ambiguous.
    parsed = parseArgs({ args: negativeValues(argv, VALUED), options: OPTIONS, allowPositionals: false, strict: true });
  } catch (e) {
    const msg = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new UserError(`iperf: ${msg}: see "anyperf iperf --help" for the options iperf 2 understands`);
  }
  const v = parsed.values;
  if (v.help) return { kind: "help" };
  if (v.version) return { kind: "version" };
  if (v.server && v.client !== undefined) throw new UserError("iperf: both -s and -c given: run either a server (-s) or a client (-c host)");
  if (!v.server && v.client === undefined) throw new UserError("iperf: nothing to do: pass -s to run a server or -c <host> to run a client");
  const format = v.format ?? "a";
  if (!(FORMAT_LETTERS as readonly string[]).includes(format)) throw new UserError(`-f "${format}" is not a report format: use one of ${FORMAT_LETTERS.join(" ")}`);
  const style = v.reportstyle;
  if (style !== undefined && style.toUpperCase() !== "C") throw new UserError(`-y "${style}" is not a report style: only -y C (CSV) exists`);
  const common = {
    port: v.port !== undefined ? int(v.port.split("-")[0]!, "-p port") : undefined,
    udp: v.udp ?? false,
    bind: v.bind !== undefined ? bindAddress(v.bind) : undefined,
    intervalS: v.interval !== undefined ? seconds(v.interval, "-i interval") : 0,
    enhanced: v.enhanced ?? false,
    format: format as FormatLetter,
    csv: style !== undefined,
    ipv6: v.ipv6_domain ?? false,
    window: v.window !== undefined ? Math.floor(parseSuffixed(v.window, "-w window")) : undefined,
    len: v.len !== undefined ? Math.floor(parseSuffixed(v.len, "-l length")) : undefined,
    mss: v.mss !== undefined ? int(v.mss, "-M mss") : undefined,
    noDelay: v.nodelay ?? false,
    congestion: v["tcp-congestion"],
    tos: v.tos !== undefined ? tos(v.tos) : 0,
    sumOnly: v["sum-only"] ?? false,
    hideIps: v["hide-ips"] ?? false,
    output: v.output,
    printMss: v.print_mss ?? false,
  };
  const input = v.server
    ? {
        role: "server" as const,
        ...common,
        daemon: v.daemon ?? false,
        singleClient: v.singleclient ?? false,
        timeLimitS: v.time !== undefined ? seconds(v.time, "-t time") : undefined,
      }
    : {
        role: "client" as const,
        ...common,
        host: v.client!,
        amount:
          v.num !== undefined
            ? { kind: "bytes" as const, bytes: Math.floor(parseSuffixed(v.num, "-n bytes")) }
            : { kind: "time" as const, seconds: v.time !== undefined ? seconds(v.time, "-t time") : 10 },
        rate: v.bandwidth !== undefined ? parseRate(v.bandwidth) : undefined,
        parallel: v.parallel !== undefined ? int(v.parallel, "-P parallel") : 1,
        tradeoff: v.tradeoff ?? false,
        dual: v.dualtest ?? false,
        reverse: v.reverse ?? false,
        fullDuplex: v["full-duplex"] ?? false,
        listenPort: v.listenport !== undefined ? int(v.listenport, "-L port") : undefined,
        compat: v.compatibility ?? false,
        peerDetect: v["peer-detect"] ?? false,
        noUdpFin: v["no-udp-fin"] ?? false,
        connectOnly: co.value === undefined ? undefined : co.value === null ? 10 : int(co.value, "--connect-only"),
        tripTimes: v["trip-times"] ?? false,
        writeTimes: v["tcp-write-times"] ?? false,
        tcpQuickAck: v["tcp-quickack"] ?? false,
        histograms: hist.value !== undefined ? histograms(hist.value) : undefined,
        isochronous: isoch.value !== undefined ? isochronous(isoch.value, v.ipg) : undefined,
        txStartS: v["txstart-time"] !== undefined ? seconds(v["txstart-time"], "--txstart-time") : undefined,
        bounceback: bounceback(v, bb.value === undefined ? undefined : bb.value === null ? null : int(bb.value, "--bounceback"), v.len !== undefined ? Math.floor(parseSuffixed(v.len, "-l length")) : undefined),
      };
  const plan = PlanSchema.safeParse(input);
  if (!plan.success) {
    throw optionError(plan.error, PLAN_FLAGS, { input, given: { "amount.seconds": v.time, "amount.bytes": v.num, timeLimitS: v.time, rate: v.bandwidth, window: v.window, len: v.len, tos: v.tos }, exitCode: 1, help: 'see "anyperf iperf --help"' })
      ?? new UserError(`iperf: ${plan.error.issues[0]!.message}: see "anyperf iperf --help"`);
  }
  const p = plan.data;
  if (p.udp && p.len > MAX_DATAGRAM_BYTES) {
    throw new UserError(`-l ${v.len}: a UDP datagram holds at most ${MAX_DATAGRAM_BYTES} bytes; pass -l ${MAX_DATAGRAM_BYTES} or less with -u`);
  }
  if (p.role === "client") {
    if (p.amount.kind === "time" && p.amount.seconds <= 0) throw new UserError("-t must be more than 0 seconds for a client");
    if ((p.tradeoff || p.dual) && (p.reverse || p.fullDuplex)) throw new UserError("-r/-d cannot be combined with -R/--full-duplex: pick one way to send back");
    if (p.udp && (p.tradeoff || p.dual || p.fullDuplex)) throw new UserError("-r, -d and --full-duplex are TCP only here: drop them, or -u");
    if (p.bounceback) refuseWithBounceback(p, v.len !== undefined && v["bounceback-request"] !== undefined);
    if (p.txStartS !== undefined) refuseWithTxStart(p);
    if (p.connectOnly !== undefined) refuseWithConnectOnly(p, v.interval !== undefined);
    if (p.tcpQuickAck && (p.udp || p.bounceback || p.compat)) {
      throw new UserError(`iperf: --tcp-quickack with ${p.udp ? "-u (TCP_QUICKACK is a TCP option)" : p.bounceback ? "--bounceback (it sets quickack itself; --bounceback-no-quickack turns it off)" : "-C (no header carries it to the server)"}: drop one of them`);
    }
    if (p.isochronous) refuseWithIsochronous(p, v.bandwidth !== undefined);
    if (p.isochronous && p.udp && p.len < ISOCH_DATAGRAM_MIN) {
      throw new UserError(`-l ${p.len}: an --isochronous datagram carries the ${ISOCH_DATAGRAM_MIN}-byte header with its frame fields; pass -l ${ISOCH_DATAGRAM_MIN} or more`);
    }
    if (p.isochronous && !p.udp && p.len < TCP_BURST_HEADER.headerBytes) {
      throw new UserError(`-l ${p.len}: an --isochronous frame opens with its ${TCP_BURST_HEADER.headerBytes}-byte burst header; pass -l ${TCP_BURST_HEADER.headerBytes} or more`);
    }
    if (v.ipg !== undefined && p.isochronous && !p.udp) throw new UserError("iperf: --ipg is for UDP frames (the gap between a frame's datagrams): add -u, or drop it");
    if (v.ipg !== undefined && !p.isochronous) throw new UserError("iperf: --ipg without --isochronous: it spaces a frame's datagrams; add --isochronous, or drop it");
    if (p.writeTimes) refuseWithWriteTimes(p, hist.value !== undefined ? "--histograms" : "--tcp-write-times");
    if (p.tripTimes && (p.reverse || p.compat || p.fullDuplex || p.dual || p.tradeoff)) {
      throw new UserError("iperf: --trip-times: anyperf's client stamps only what it sends itself (no -R, -C, -d, -r or --full-duplex): drop --trip-times or those");
    }
    if (p.tripTimes && !p.udp && p.len < TCP_BURST_HEADER.headerBytes) {
      throw new UserError(`-l ${p.len}: a --trip-times write opens with its ${TCP_BURST_HEADER.headerBytes}-byte burst header; pass -l ${TCP_BURST_HEADER.headerBytes} or more`);
    }
  }
  return { kind: "run", plan: p };
}
