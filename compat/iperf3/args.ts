/**
 * `anyperf iperf3 <args>`: iperf3 3.12's command line to a typed plan. Defaults, limits and the wording of errors
 * follow iperf_parse_arguments so scripts written for iperf3 behave the same; every error names the fix.
 */
import { parseArgs } from "node:util";
import { UserError } from "../../src/errors.ts";
import { isZodError, optionError } from "../../src/option-error.ts";
import { parseRate, parseSize } from "../../src/units.ts";
import { Defaults, Limits } from "../../interop/iperf3/constants.ts";
import { TestParams } from "../../interop/iperf3/params.ts";
import { OPTIONS, canonical, toParseArgsArgv, tokenize } from "./options.ts";
import { ClientPlan, ServerPlan, type Family, type Iperf3Plan, type OutputPlan } from "./plan.ts";
import { parseDscp } from "./dscp.ts";
import { clientAuth, serverAuth } from "./auth-files.ts";

export type ParsedCommand = { kind: "run"; plan: Iperf3Plan } | { kind: "help" } | { kind: "version" };

/** A parameter error as iperf3 words it, exit code 1 like the stock tool. */
function paramError(text: string, fix: string): UserError {
  return new UserError(`parameter error - ${text}: ${fix}`, 1);
}

/** C atoi() with a check: leading integer required, trailing junk refused (atoi would ignore it silently). */
function integer(v: string, option: string): number {
  const t = v.trim();
  if (!/^[+-]?\d+$/.test(t)) throw paramError(`${option} "${v}" is not an integer`, `pass a whole number to ${option}`);
  return Number(t);
}

/** strtol(v, &end, 0) as 3.12 reads -A: the leading number counts, what follows it is ignored ("0/1" is 0). */
function leadingInteger(v: string, fail: () => UserError): number {
  const m = /^\s*([+-]?)(0x[0-9a-f]+|0[0-7]*|[1-9]\d*)/i.exec(v);
  if (!m) throw fail();
  const t = m[2]!;
  const n = /^0x/i.test(t) ? parseInt(t.slice(2), 16) : t.length > 1 && t.startsWith("0") ? parseInt(t.slice(1), 8) : Number(t);
  return m[1] === "-" ? -n : n;
}

/** strtol(v, &end, 0): decimal, 0x hex or 0 octal. */
function cInteger(v: string, option: string): number {
  const t = v.trim();
  let n: number;
  if (/^0x[0-9a-f]+$/i.test(t)) n = parseInt(t.slice(2), 16);
  else if (/^0[0-7]+$/.test(t)) n = parseInt(t.slice(1), 8);
  else if (/^\d+$/.test(t)) n = Number(t);
  else throw paramError(`${option} "${v}" is not a number`, `pass a decimal, 0x-hex or 0-octal number to ${option}`);
  return n;
}

/** -A n[,m]: this side's CPU n, and (client) the server's m, both read as 3.12 reads them. */
function parseAffinity(v: string | undefined): { affinity?: number; serverAffinity?: number } {
  if (v === undefined) return {};
  const [a, b] = v.split(",", 2) as [string, string | undefined];
  const bad = () => paramError("unable to set CPU affinity", "pass -A n[,m] with CPUs 0..1024");
  const affinity = leadingInteger(a, bad);
  const serverAffinity = b === undefined ? undefined : leadingInteger(b, bad);
  if (affinity < 0 || affinity > 1024 || (serverAffinity !== undefined && (serverAffinity < 0 || serverAffinity > 1024))) throw bad();
  return { affinity, serverAffinity };
}

function float(v: string, option: string): number {
  const n = Number(v.trim());
  if (v.trim() === "" || !Number.isFinite(n)) throw paramError(`${option} "${v}" is not a number`, `pass a number to ${option}`);
  return n;
}

const size = (v: string, option: string) => parseSize(v, { base: 1024, option });

function rate(v: string, option: string): number {
  return parseRate(v, { base: 1000, pps: false, option }).bitsPerSecond ?? 0;
}

const PARSE_OPTIONS = Object.fromEntries(
  Object.entries(OPTIONS)
    .filter(([, d]) => !d.aliasOf)
    .map(([name, d]) => [name, { type: d.arg === "none" ? ("boolean" as const) : ("string" as const) }]),
);

/** The flag that sets each plan field (params.* by their own name), for messages. */
const PLAN_FLAGS: Record<string, string> = {
  port: "-p", bind: "-B", pidfile: "-I", sndTimeoutMs: "--snd-timeout", rcvTimeoutMs: "--rcv-timeout",
  idleTimeoutS: "--idle-timeout", bitrateLimit: "--server-bitrate-limit", bitrateLimitIntervalS: "--server-bitrate-limit",
  maxDurationS: "--server-max-duration", maxTests: "--max-tests", host: "-c", cport: "--cport", connectTimeoutMs: "--connect-timeout",
  affinity: "-A", format: "-f", intervalS: "-i", logfile: "--logfile", timestamps: "--timestamps", omitS: "-O", timeS: "-t",
  bytes: "-n", blocks: "-k", parallel: "-P", len: "-l", bandwidth: "-b", pacingTimerUs: "--pacing-timer", burst: "-b",
  mss: "-M", window: "-w", fqRate: "--fq-rate", tos: "-S", flowLabel: "-L", title: "-T", extraData: "--extra-data",
  congestion: "-C", serverAffinity: "-A",
};

/** Later iperf3's options anyperf does not run, refused by name rather than run as a different test. */
const UNRUN: [string, string][] = [
  ["mptcp", "no IPPROTO_MPTCP sockets"],
  ["gsro", "no UDP_SEGMENT/UDP_GRO batching"],
  ["skip-rx-copy", "no MSG_TRUNC reads"],
  ["json-stream-full-output", "--json-stream prints the events only"],
];

/**
 * A device to bind to (`-B host%dev`, `-c host%dev`, `--bind-dev dev`) is refused by name: our sockets take no
 * SO_BINDTODEVICE, and a test bound to the address alone is not the one asked for.
 */
function refuseDevice(bind: string | undefined, host: string | undefined, bindDev: string | undefined): void {
  const named = bindDev !== undefined ? `--bind-dev ${bindDev}` : bind?.includes("%") ? `-B ${bind}` : host?.includes("%") ? `-c ${host}` : undefined;
  if (named !== undefined) throw new UserError(`${named}: anyperf does not bind to a device (SO_BINDTODEVICE): drop the device and bind to its address (-B ADDR)`, 1);
}

/** --cntl-ka[=idle/interval/count], each part optional as in 3.21 ("/5" sets the interval only). */
function parseCntlKa(v: string | undefined): ClientPlan["cntlKa"] {
  if (v === undefined) return undefined;
  const [idle, interval, count] = v.split("/", 3).map((t) => (t === "" ? undefined : integer(t, "--cntl-ka")));
  if ([idle, interval, count].some((n) => n !== undefined && n < 1)) throw paramError("--cntl-ka values must be positive", "pass --cntl-ka=IDLE/INTERVAL/COUNT in seconds and probes, each 1 or more");
  return { idleS: idle, intervalS: interval, count };
}

export function parseIperf3Args(argv: readonly string[]): ParsedCommand {
  try {
    return parse(argv);
  } catch (e) {
    // The checks above mirror iperf3's; a value only the plan's schema bounds still gets one line naming its flag.
    if (isZodError(e)) throw optionError(e, PLAN_FLAGS, { exitCode: 1, help: "see --help for iperf3's options" }) ?? e;
    throw e;
  }
}

function parse(argv: readonly string[]): ParsedCommand {
  const { tokens, positionals } = tokenize(argv);
  if (positionals.length > 0) throw new UserError(`unexpected argument '${positionals[0]}': options start with - (see --help)`, 1);
  const { values: o } = parseArgs({ args: toParseArgsArgv(tokens), options: PARSE_OPTIONS, strict: true, allowPositionals: false });
  const str = (k: string) => o[k] as string | undefined;
  const flag = (k: string) => o[k] === true;

  if (flag("help")) return { kind: "help" };
  if (flag("version")) return { kind: "version" };

  const isServer = flag("server");
  const host = str("client");
  if (isServer && host !== undefined) throw paramError("cannot be both server and client", "pass either -s or -c HOST");
  // Stock iperf3 tries to resolve "" and fails there; it cannot name a server.
  if (host === "") throw new UserError("error - unable to connect to server: Name or service not known (-c '' names no host: pass the server's name or address)", 1);
  if (!isServer && host === undefined) throw paramError("must either be a client (-c) or server (-s)", "pass -s to serve or -c HOST to test against a server");
  const used = new Set(tokens.map((t) => canonical(t.name)));
  for (const name of used) {
    const role = OPTIONS[name]!.role;
    if (isServer && role === "client") throw paramError("some option you are trying to set is client only", `--${name} needs -c; drop it from the server`);
    if (!isServer && role === "server") throw paramError("some option you are trying to set is server only", `--${name} needs -s; drop it from the client`);
  }
  if (str("file") !== undefined) throw new UserError("-F/--file is not supported by anyperf: drop it (data is generated in memory)", 1);
  if (flag("sctp")) throw new UserError("--sctp is not supported by anyperf: drop it for TCP, or use -u for UDP", 1);
  for (const [name, why] of UNRUN) {
    if (o[name] !== undefined) throw new UserError(`--${name} is not supported by anyperf (${why}): drop it`, 1);
  }

  let port: number = Defaults.port;
  if (str("port") !== undefined) {
    port = integer(str("port")!, "-p");
    if (port < 1 || port > 65535) throw paramError("port number must be between 1 and 65535 inclusive", "pass -p 1..65535");
  }
  const family: Family = flag("version6") ? "ipv6" : flag("version4") ? "ipv4" : "any";
  const bind = str("bind");
  refuseDevice(bind, host, str("bind-dev"));

  const output = parseOutput(o);
  const rcvTimeout = str("rcv-timeout");
  let rcvTimeoutMs: number = Defaults.rcvTimeoutMs;
  if (rcvTimeout !== undefined) {
    rcvTimeoutMs = integer(rcvTimeout, "--rcv-timeout");
    if (rcvTimeoutMs < Limits.minRcvTimeoutMs || rcvTimeoutMs > Limits.maxTimeS * 1000) {
      throw paramError("receive timeout value is incorrect or not in range", `pass --rcv-timeout ${Limits.minRcvTimeoutMs}..${Limits.maxTimeS * 1000} (ms)`);
    }
  }
  let sndTimeoutMs: number | undefined;
  if (str("snd-timeout") !== undefined) {
    sndTimeoutMs = integer(str("snd-timeout")!, "--snd-timeout");
    if (sndTimeoutMs < 0 || sndTimeoutMs > Limits.maxTimeS * 1000) throw paramError("send timeout value is incorrect or not in range", `pass --snd-timeout 0..${Limits.maxTimeS * 1000} (ms)`);
  }
  const { affinity } = parseAffinity(str("affinity"));
  const common = { port, bind, family, output, pidfile: str("pidfile"), rcvTimeoutMs, sndTimeoutMs, affinity };

  if (isServer) {
    let bitrateLimit = 0;
    let bitrateLimitIntervalS = 5;
    const lim = str("server-bitrate-limit");
    if (lim !== undefined) {
      const [r, iv] = lim.split("/", 2) as [string, string | undefined];
      bitrateLimit = rate(r, "--server-bitrate-limit");
      if (iv !== undefined) {
        bitrateLimitIntervalS = float(iv, "--server-bitrate-limit interval");
        if (bitrateLimitIntervalS !== 0 && (bitrateLimitIntervalS < Limits.minIntervalS || bitrateLimitIntervalS > Limits.maxIntervalS)) {
          throw paramError("invalid time interval for calculating average data rate", "pass a /interval of 0.1..60 seconds");
        }
      }
    }
    let idleTimeoutS = 0;
    if (str("idle-timeout") !== undefined) {
      idleTimeoutS = integer(str("idle-timeout")!, "--idle-timeout");
      if (idleTimeoutS < 1 || idleTimeoutS > Limits.maxTimeS) throw paramError("idle timeout parameter is not positive or larger than allowed limit", `pass --idle-timeout 1..${Limits.maxTimeS}`);
    }
    const maxTests = str("max-tests") === undefined ? 8 : integer(str("max-tests")!, "--max-tests");
    if (maxTests < 1 || maxTests > 1024) throw paramError(`--max-tests ${maxTests} is out of range`, "pass --max-tests 1..1024");
    const maxDurationS = str("server-max-duration") === undefined ? 0 : integer(str("server-max-duration")!, "--server-max-duration");
    if (maxDurationS < 0 || maxDurationS > Limits.maxTimeS) throw paramError("--server-max-duration is out of range", `pass 0..${Limits.maxTimeS} seconds`);
    const plan = ServerPlan.parse({
      role: "server",
      ...common,
      oneOff: flag("one-off"),
      daemon: flag("daemon"),
      idleTimeoutS,
      bitrateLimit,
      bitrateLimitIntervalS,
      maxDurationS,
      maxTests,
      auth: serverAuth(o),
    });
    return { kind: "run", plan };
  }
  return { kind: "run", plan: parseClient(host!, o, common) };
}

function parseOutput(o: Record<string, string | boolean | undefined>): OutputPlan {
  const str = (k: string) => o[k] as string | undefined;
  let format = "a";
  if (str("format") !== undefined) {
    format = str("format")!.charAt(0);
    if (!"kmgtKMGT".includes(format) || format === "") throw paramError("bad format specifier (valid formats are in the set [kmgtKMGT])", "pass -f k, m, g, t (bits) or K, M, G, T (bytes)");
  }
  let intervalS: number = Defaults.intervalS;
  if (str("interval") !== undefined) {
    intervalS = float(str("interval")!, "-i");
    if (intervalS !== 0 && (intervalS < Limits.minIntervalS || intervalS > Limits.maxIntervalS)) {
      throw paramError(`invalid report interval (min = ${Limits.minIntervalS}, max = ${Limits.maxIntervalS} seconds)`, "pass -i 0.1..60, or 0 for no interval reports");
    }
  }
  const ts = o.timestamps;
  return {
    format,
    intervalS,
    json: o.json === true,
    jsonStream: o["json-stream"] === true,
    verbose: o.verbose === true,
    debug: o.debug !== undefined,
    forceflush: o.forceflush === true,
    logfile: str("logfile"),
    // iperf3's default timestamp format is "%c ".
    timestamps: ts === undefined ? undefined : ts === "" ? "%c " : (ts as string),
  };
}

function parseClient(host: string, o: Record<string, string | boolean | undefined>, common: Record<string, unknown>): ClientPlan {
  const str = (k: string) => o[k] as string | undefined;
  const flag = (k: string) => o[k] === true;
  const udp = flag("udp");
  const reverse = flag("reverse");
  const bidirectional = flag("bidir");
  if (reverse && bidirectional) throw paramError("cannot be both reverse and bidirectional", "pass either -R or --bidir");

  let bandwidth = udp ? Defaults.udpRateBps : 0;
  let burst = 0;
  if (str("bitrate") !== undefined) {
    const [r, b] = str("bitrate")!.split("/", 2) as [string, string | undefined];
    if (b !== undefined) {
      burst = integer(b, "-b burst");
      if (burst <= 0 || burst > Limits.maxBurst) throw paramError(`invalid burst count (maximum = ${Limits.maxBurst})`, "pass -b RATE/1..1000");
    }
    bandwidth = rate(r, "-b");
  }
  const timeGiven = str("time") !== undefined;
  let timeS: number = Defaults.durationS;
  if (timeGiven) {
    timeS = integer(str("time")!, "-t");
    if (timeS > Limits.maxTimeS) throw paramError(`test duration too long (maximum = ${Limits.maxTimeS} seconds)`, `pass -t up to ${Limits.maxTimeS}`);
    if (timeS < 0) throw paramError(`-t ${timeS} is negative`, "pass -t 0 or more seconds");
  }
  const bytes = str("bytes") === undefined ? 0 : size(str("bytes")!, "-n");
  const blocks = str("blockcount") === undefined ? 0 : size(str("blockcount")!, "-k");
  if ((timeGiven && bytes) || (timeGiven && blocks) || (bytes && blocks)) {
    throw paramError("only one test end condition (-t, -n, -k) may be specified", "keep one of -t, -n, -k");
  }
  if ((bytes || blocks) && !timeGiven) timeS = 0;

  let len = str("length") === undefined ? 0 : size(str("length")!, "-l");
  if (len === 0 && !udp) len = Defaults.tcpBlockSize;
  if (!udp && (len <= 0 || len > Limits.maxBlockSize)) throw paramError(`block size too large (maximum = ${Limits.maxBlockSize} bytes)`, "pass -l up to 1M");
  if (udp && len > 0 && (len < Limits.minUdpBlockSize || len > Limits.maxUdpBlockSize)) {
    throw paramError(`block size invalid (minimum = ${Limits.minUdpBlockSize} bytes, maximum = ${Limits.maxUdpBlockSize} bytes)`, "pass -l 16..65507 for UDP");
  }
  const udpLenFromMss = udp && len === 0;

  let parallel = 1;
  if (str("parallel") !== undefined) {
    parallel = integer(str("parallel")!, "-P");
    if (parallel > Limits.maxStreams) throw paramError(`number of parallel streams too large (maximum = ${Limits.maxStreams})`, "pass -P 1..128");
    if (parallel < 1) throw paramError(`-P ${parallel} is not a stream count`, "pass -P 1..128");
  }
  let window = 0;
  if (str("window") !== undefined) {
    window = size(str("window")!, "-w");
    if (window > Limits.maxWindow) throw paramError(`socket buffer size too large (maximum = ${Limits.maxWindow} bytes)`, "pass -w up to 512M");
  }
  let mss = 0;
  if (str("set-mss") !== undefined) {
    mss = integer(str("set-mss")!, "-M");
    if (mss > Limits.maxMss) throw paramError(`TCP MSS too large (maximum = ${Limits.maxMss} bytes)`, `pass -M up to ${Limits.maxMss}`);
    if (mss < 0) throw paramError(`-M ${mss} is negative`, "pass a positive MSS");
  }
  let tos = 0;
  if (str("tos") !== undefined) {
    tos = cInteger(str("tos")!, "-S");
    if (tos < 0 || tos > 255) throw paramError("bad TOS value (must be between 0 and 255 inclusive)", "pass -S 0..255");
  }
  if (str("dscp") !== undefined) {
    const d = parseDscp(str("dscp")!);
    if (d === undefined) throw paramError("bad TOS value (must be between 0 and 255 inclusive)", "pass --dscp 0..63 or a name such as ef, af41, cs1");
    tos = d << 2;
  }
  let flowLabel = 0;
  if (str("flowlabel") !== undefined) {
    flowLabel = cInteger(str("flowlabel")!, "-L");
    if (flowLabel < 1 || flowLabel > 0xfffff) throw paramError("unable to set IPv6 flow label", "pass -L 1..1048575");
  }
  let omitS = 0;
  if (str("omit") !== undefined) {
    omitS = integer(str("omit")!, "-O");
    if (omitS < 0 || omitS > Limits.maxOmitS) throw paramError("bogus value for --omit", "pass -O 0..60");
  }
  let connectTimeoutMs: number | undefined;
  if (str("connect-timeout") !== undefined) connectTimeoutMs = size(str("connect-timeout")!, "--connect-timeout");
  const cntlKa = parseCntlKa(str("cntl-ka"));
  let cport: number | undefined;
  if (str("cport") !== undefined) {
    cport = integer(str("cport")!, "--cport");
    if (cport < 1 || cport > 65535) throw paramError("port number must be between 1 and 65535 inclusive", "pass --cport 1..65535");
  }
  if (str("rcv-timeout") !== undefined && !reverse && !bidirectional) {
    throw paramError("client receive timeout is valid only in receiving mode", "add -R or --bidir, or drop --rcv-timeout");
  }
  // Our sender paces with its own token bucket (100 ms of credit, src/worker/sockets.ts senderPacer), not 3.x's
  // timer ticks and block bursts: sending, either would be a different test than the one asked for. With -R the
  // server paces, and a stock server applies both.
  if (!reverse && (burst > 0 || str("pacing-timer") !== undefined)) {
    const what = burst > 0 ? `-b ${str("bitrate")}` : `--pacing-timer ${str("pacing-timer")}`;
    throw paramError(`${what}: anyperf's sender paces with its own token bucket, not 3.x's ${burst > 0 ? "block bursts" : "timer ticks"}`, `drop ${burst > 0 ? "the /BURST" : "--pacing-timer"}, or pass -R so the server paces`);
  }
  const params = TestParams.parse({
    protocol: udp ? "udp" : "tcp",
    omitS,
    timeS,
    bytes,
    blocks,
    parallel,
    reverse,
    bidirectional,
    // Replaced by the control connection's MSS at run time when udpLenFromMss.
    len: len || Defaults.udpBlockSizeFallback,
    bandwidth,
    pacingTimerUs: str("pacing-timer") === undefined ? Defaults.pacingTimerUs : size(str("pacing-timer")!, "--pacing-timer"),
    burst,
    mss,
    noDelay: flag("no-delay"),
    window,
    fqRate: str("fq-rate") === undefined ? 0 : rate(str("fq-rate")!, "--fq-rate"),
    tos,
    flowLabel,
    title: str("title"),
    extraData: str("extra-data"),
    congestion: str("congestion"),
    getServerOutput: flag("get-server-output"),
    udpCounters64bit: flag("udp-counters-64bit"),
    repeatingPayload: flag("repeating-payload"),
    zerocopy: flag("zerocopy"),
    dontFragment: flag("dont-fragment"),
    serverAffinity: parseAffinity(str("affinity")).serverAffinity,
  });
  const auth = clientAuth(o, process.env);
  return ClientPlan.parse({ role: "client", ...common, host, cport, connectTimeoutMs, cntlKa, params, udpLenFromMss, auth });
}
