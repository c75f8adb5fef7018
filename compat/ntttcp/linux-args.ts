import { UserError } from "../../src/errors.ts";
import { MAX_IO_BYTES } from "../../src/stream-spec.ts";
import { optionError } from "../../src/option-error.ts";
import { atoi, unitAtod } from "./c-numbers.ts";
import { LINUX_DEFAULTS, LinuxOptions, type ParseMessage } from "./linux-options.ts";

/**
 * ntttcp-for-linux command line, as getopt_long() reads it with the option string below
 * (docs/protocols/ntttcp-linux.md §1): case-sensitive, clustered flags (-VN), attached arguments (-p5001, -ns = -n s),
 * optional arguments taken from the next word unless it starts with '-', and every option applied left to right (so -m
 * after -P resets the ports).
 */

export const LINUX_SHORT = "r::s::DMLeHm:P:a:n:l:6up:f::b:B:W:t:C:NO::x::j::QVh";
type ArgKind = "none" | "required" | "optional";
const SHORT_KIND = new Map<string, ArgKind>();
for (let i = 0; i < LINUX_SHORT.length; i++) {
  const c = LINUX_SHORT[i]!;
  const kind: ArgKind = LINUX_SHORT[i + 1] === ":" ? (LINUX_SHORT[i + 2] === ":" ? "optional" : "required") : "none";
  SHORT_KIND.set(c, kind);
  i += kind === "none" ? 0 : kind === "required" ? 1 : 2;
}
export const LINUX_LONG: Record<string, "none" | "required"> = {
  "show-tcp-retrans": "none",
  "show-nic-packets": "required",
  "show-dev-interrupts": "required",
  "fq-rate-limit": "required",
  "no-delay": "none",
};

/** Exit statuses of the real tool: usage 23 (-1001 & 0xff), bad arguments 255 (exit(-1)). */
export const LINUX_EXIT_USAGE = 23;
export const LINUX_EXIT_ARGS = 255;

/** -h prints the usage and exits 23 as soon as getopt reaches it, before any check. */
export type LinuxParse = { kind: "help" } | { kind: "run"; options: LinuxOptions; messages: ParseMessage[] };

interface Raw {
  server: boolean;
  client: boolean;
  address: string;
  clientAddress: string;
  useClientAddress: boolean;
  daemon: boolean;
  multiClient: boolean;
  lastClient: boolean;
  epoll: boolean;
  hold: boolean;
  ports: number;
  threadsPerPort: number;
  connsPerThread: number;
  cpuAffinity: number;
  ipv6: boolean;
  udp: boolean;
  basePort: number;
  sourcePort: number;
  recvSize: number;
  sendSize: number;
  bandwidth: number;
  fqRate: number;
  noDelay: boolean;
  warmup: number;
  duration: number;
  cooldown: number;
  noSync: boolean;
  logFile: string | undefined;
  xmlFile: string | undefined;
  jsonFile: string | undefined;
  quiet: boolean;
  verbose: boolean;
  showTcpRetrans: boolean;
  showNicPackets: string;
  showDevInterrupts: string;
}

function usage(detail: string): UserError {
  return new UserError(`${detail}: see 'ntttcp -h' (ntttcp-for-linux options are case-sensitive)`, LINUX_EXIT_USAGE);
}

/** process_mappings(): "ports,cpu,host"; stops at the first bad field, keeping what it already applied. */
function applyMapping(raw: Raw, mapping: string, cpus: number, messages: ParseMessage[]): void {
  const fields = mapping.split(",");
  const threads = atoi(fields[0] ?? "");
  if (threads < 1) return;
  raw.ports = threads;
  raw.threadsPerPort = 1;
  if (fields.length < 2) return;
  const cpu = fields[1]!;
  if (cpu !== "*") {
    const n = atoi(cpu);
    if (n < -1 || n > cpus - 1) {
      messages.push({ level: "ERR", text: "process_mappings: cpu specified is not in allowed scope" });
      return;
    }
    raw.cpuAffinity = n;
  }
  if (fields.length < 3) return;
  raw.address = fields[2]!;
  if (fields.length > 3) messages.push({ level: "ERR", text: "process_mappings: unexpected parameters in mapping" });
}

const HELP = Symbol("help");
/** The real tool's message when neither -r nor -s is given. */
export const NO_ROLE = "no role specified. use receiver role";

export function parseLinuxArgs(argv: readonly string[], env: { cpus: number }): LinuxParse {
  try {
    return parseOrHelp(argv, env);
  } catch (e) {
    if (e === HELP) return { kind: "help" };
    throw e;
  }
}

function parseOrHelp(argv: readonly string[], env: { cpus: number }): LinuxParse {
  const raw: Raw = {
    server: false,
    client: false,
    address: "0.0.0.0",
    clientAddress: "0.0.0.0",
    useClientAddress: false,
    daemon: false,
    multiClient: false,
    lastClient: false,
    epoll: false,
    hold: false,
    ports: LINUX_DEFAULTS.ports,
    threadsPerPort: LINUX_DEFAULTS.threadsPerPort,
    connsPerThread: LINUX_DEFAULTS.connsPerThread,
    cpuAffinity: -1,
    ipv6: false,
    udp: false,
    basePort: LINUX_DEFAULTS.basePort,
    sourcePort: 0,
    recvSize: LINUX_DEFAULTS.recvSize,
    sendSize: LINUX_DEFAULTS.sendSize,
    bandwidth: 0,
    fqRate: 0,
    noDelay: false,
    warmup: 0,
    duration: LINUX_DEFAULTS.duration,
    cooldown: 0,
    noSync: false,
    logFile: undefined,
    xmlFile: undefined,
    jsonFile: undefined,
    quiet: false,
    verbose: false,
    showTcpRetrans: false,
    showNicPackets: "",
    showDevInterrupts: "",
  };
  const messages: ParseMessage[] = [];
  let i = 0;
  const nextFree = (): string | undefined => {
    const w = argv[i];
    if (w !== undefined && w !== "" && !w.startsWith("-")) {
      i++;
      return w;
    }
    return undefined;
  };

  const apply = (opt: string, arg: string | undefined): void => {
    switch (opt) {
      case "r":
      case "s":
        if (opt === "r") raw.server = true;
        else raw.client = true;
        if (arg !== undefined) raw.address = arg;
        else raw.address = nextFree() ?? raw.address;
        return;
      case "D":
        raw.daemon = true;
        return;
      case "M":
        raw.multiClient = true;
        return;
      case "L":
        raw.lastClient = true;
        return;
      case "e":
        raw.epoll = true;
        return;
      case "H":
        raw.hold = true;
        return;
      case "m":
        applyMapping(raw, arg!, env.cpus, messages);
        return;
      case "P":
        raw.ports = atoi(arg!);
        return;
      case "a":
        raw.clientAddress = arg!;
        raw.useClientAddress = true;
        return;
      case "n":
        raw.threadsPerPort = atoi(arg!);
        return;
      case "l":
        raw.connsPerThread = atoi(arg!);
        return;
      case "6":
        raw.ipv6 = true;
        return;
      case "u":
        raw.udp = true;
        return;
      case "p":
        raw.basePort = atoi(arg!);
        return;
      case "f": {
        const w = arg ?? nextFree();
        raw.sourcePort = w === undefined ? LINUX_DEFAULTS.sourcePort : atoi(w);
        return;
      }
      case "b":
        raw.recvSize = raw.sendSize = Math.trunc(unitAtod(arg!, 1024));
        return;
      case "B":
        raw.bandwidth = Math.trunc(unitAtod(arg!, 1000));
        return;
      case "fq-rate-limit":
        raw.fqRate = Math.trunc(unitAtod(arg!, 1000));
        return;
      case "W":
        raw.warmup = atoi(arg!);
        return;
      case "t":
        raw.duration = atoi(arg!);
        return;
      case "C":
        raw.cooldown = atoi(arg!);
        return;
      case "N":
        raw.noSync = true;
        return;
      case "show-tcp-retrans":
        raw.showTcpRetrans = true;
        return;
      case "show-nic-packets":
        raw.showNicPackets = arg!;
        return;
      case "show-dev-interrupts":
        raw.showDevInterrupts = arg!;
        return;
      case "no-delay":
        raw.noDelay = true;
        return;
      case "O":
        raw.logFile = arg ?? nextFree() ?? raw.logFile ?? LINUX_DEFAULTS.logFile;
        return;
      case "x":
        raw.xmlFile = arg ?? nextFree() ?? raw.xmlFile ?? LINUX_DEFAULTS.xmlFile;
        return;
      case "j":
        raw.jsonFile = arg ?? nextFree() ?? raw.jsonFile ?? LINUX_DEFAULTS.jsonFile;
        return;
      case "Q":
        raw.quiet = true;
        return;
      case "V":
        raw.verbose = true;
        return;
      case "h":
        throw HELP;
    }
  };

  while (i < argv.length) {
    const word = argv[i++]!;
    if (word === "--") break;
    if (word.startsWith("--")) {
      const [name, inline] = word.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const matches = Object.keys(LINUX_LONG).filter((k) => k === name || k.startsWith(name));
      const exact = matches.find((k) => k === name);
      const key = exact ?? (matches.length === 1 ? matches[0] : undefined);
      if (!key) throw usage(matches.length > 1 ? `option '--${name}' is ambiguous` : `unrecognized option '--${name}'`);
      if (LINUX_LONG[key] === "required") {
        const a = inline ?? argv[i++];
        if (a === undefined) throw usage(`option '--${key}' requires an argument`);
        apply(key, a);
      } else {
        if (inline !== undefined) throw usage(`option '--${key}' doesn't allow an argument`);
        apply(key, undefined);
      }
      continue;
    }
    // GNU getopt permutes operands to the end and the real tool never reads them: ignore.
    if (!word.startsWith("-") || word === "-") continue;
    for (let k = 1; k < word.length; k++) {
      const c = word[k]!;
      const kind = SHORT_KIND.get(c);
      if (kind === undefined || c === ":") throw usage(`invalid option -- '${c}'`);
      const rest = word.slice(k + 1);
      if (kind === "none") {
        apply(c, undefined);
        continue;
      }
      if (kind === "optional") {
        apply(c, rest === "" ? undefined : rest);
        break;
      }
      const a = rest !== "" ? rest : argv[i++];
      if (a === undefined) throw usage(`option requires an argument -- '${c}'`);
      apply(c, a);
      break;
    }
  }

  return { kind: "run", options: finish(raw, messages), messages };
}

/** The flag that sets each option, for a value only the schema bounds (an overflow to Infinity, a negative rate). */
const OPTION_FLAGS: Record<string, string> = {
  ports: "-P", threadsPerPort: "-n", connsPerThread: "-l", cpuAffinity: "-m", basePort: "-p", sourcePort: "-f", recvSize: "-b",
  sendSize: "-b", bandwidth: "-B", fqRate: "--fq-rate-limit", warmup: "-W", duration: "-t", cooldown: "-C",
};

/** verify_args(): role checks, address family checks and the clamps, with the real tool's messages. */
function finish(raw: Raw, messages: ParseMessage[]): LinuxOptions {
  const fail = (text: string, fix: string): never => {
    messages.push({ level: "ERR", text });
    throw new UserError(`${text}: ${fix}`, LINUX_EXIT_ARGS);
  };
  if (raw.server && raw.client) fail("both sender and receiver roles provided", "pass only one of -r and -s");
  if (raw.ipv6 && raw.address === "0.0.0.0") raw.address = "::";
  if (raw.ipv6 && !raw.address.includes(":")) fail("invalid ipv6 address provided", "give an IPv6 address with -6");
  if (!raw.ipv6 && !raw.address.includes(".")) fail("invalid ipv4 address provided", "give an IPv4 address, or -6 for IPv6");
  if (raw.ipv6 && raw.clientAddress === "0.0.0.0") raw.clientAddress = "::";
  if (raw.useClientAddress && raw.server) fail("source interface address ('-a') is only for sender or client", "drop -a on the receiver");
  if (raw.useClientAddress && !/^[\d.]+$|:/.test(raw.clientAddress)) fail("invalid client address", "pass an IP address to -a");
  if (!raw.server && !raw.client) {
    messages.push({ level: "INFO", text: NO_ROLE });
    raw.server = true;
  }
  if (raw.client && raw.multiClient) fail("multi-clients mode ('-M') is only for receiver role", "use -M on the receiver only");
  if (raw.server && raw.lastClient) fail("last-client ('-L') is only for sender role", "use -L on the sender only");
  const info = (text: string) => messages.push({ level: "INFO", text });
  if (raw.ports > 512) {
    info("too many number-of-server-ports. use the max value");
    raw.ports = 512;
  }
  if (raw.client && raw.threadsPerPort > 25600) {
    info("too many threads-per-server-port. use the max value");
    raw.threadsPerPort = 25600;
  }
  if (raw.client && raw.connsPerThread > 1000) {
    info("too many connections-per-thread. use the max value");
    raw.connsPerThread = 1000;
  }
  if (raw.ports < 1) {
    info("invalid number-of-server-ports provided. use 1");
    raw.ports = 1;
  }
  if (raw.client && raw.threadsPerPort < 1) {
    info("invalid threads-per-server-port provided. use 1");
    raw.threadsPerPort = 1;
  }
  if (raw.client && raw.connsPerThread < 1) {
    info("invalid connections-per-thread provided. use 1");
    raw.connsPerThread = 1;
  }
  // On a receiver these sender-only values are kept but never used; clamp them so the plan stays valid.
  raw.threadsPerPort = Math.min(Math.max(raw.threadsPerPort, 1), 25600);
  raw.connsPerThread = Math.min(Math.max(raw.connsPerThread, 1), 1000);
  if (raw.client && raw.sourcePort > 0 && raw.sourcePort <= 1024) {
    raw.sourcePort = LINUX_DEFAULTS.sourcePort;
    messages.push({ level: "DBG", text: "source port is too small. use the default value" });
  }
  if (raw.client && raw.sourcePort > 0 && 65535 - raw.sourcePort < raw.ports * raw.threadsPerPort * raw.connsPerThread) {
    messages.push({ level: "ERR", text: "source port is too high to provide a sufficient range of ports for your test" });
  }
  if (raw.client && raw.bandwidth !== 0) info("Warning! '-B' is specified and the network bandwidth may be limited");
  if (raw.client && raw.fqRate !== 0) info("Warning! '--fq-rate-limit' is specified and the network bandwidth may be limited");
  if (raw.client && raw.bandwidth !== 0 && raw.fqRate !== 0) {
    info("ignore '--fq-rate-limit' as '-B' is specified");
    raw.fqRate = 0;
  }
  if (raw.udp && raw.sendSize > LINUX_DEFAULTS.maxUdpSend) {
    info("the UDP send size is too big. use the max value");
    raw.sendSize = LINUX_DEFAULTS.maxUdpSend;
  }
  if (raw.showNicPackets.startsWith("-")) {
    info("invalid network interface provided. ignore it");
    raw.showNicPackets = "";
  }
  if (raw.showDevInterrupts.startsWith("-")) {
    info("invalid interrupt device provided. ignore it");
    raw.showDevInterrupts = "";
  }
  if (raw.duration < 0) {
    raw.duration = LINUX_DEFAULTS.duration;
    info("invalid test duration provided. use the default value");
  }
  if (raw.duration === 0) info("running test in continuous mode. please monitor throughput by other tools");
  if (raw.warmup < 0) {
    raw.warmup = 0;
    info("invalid test warm-up seconds provided. use the default value");
  }
  if (raw.cooldown < 0) {
    raw.cooldown = 0;
    info("invalid test cool-down seconds provided. use the default value");
  }
  // ntttcp-for-linux would allocate it; one read or write of more than anyperf's largest is refused here, by its flag.
  if (raw.recvSize > MAX_IO_BYTES) fail(`buffer size (-b) ${raw.recvSize} is above ${MAX_IO_BYTES} bytes`, "pass -b 64M or less");
  if (raw.udp && raw.noDelay) fail("--no-delay option is not applicable for UDP", "drop --no-delay with -u");
  if (raw.sourcePort < 0) raw.sourcePort = 0;
  const input = {
    role: raw.client ? "sender" : "receiver",
    address: raw.address,
    clientAddress: raw.useClientAddress ? raw.clientAddress : undefined,
    daemon: raw.daemon,
    multiClient: raw.multiClient,
    lastClient: raw.lastClient,
    epoll: raw.epoll,
    hold: raw.hold,
    ports: raw.ports,
    threadsPerPort: raw.threadsPerPort,
    connsPerThread: raw.connsPerThread,
    cpuAffinity: raw.cpuAffinity,
    ipv6: raw.ipv6,
    udp: raw.udp,
    basePort: raw.basePort,
    sourcePort: raw.sourcePort,
    recvSize: raw.recvSize,
    sendSize: raw.sendSize,
    bandwidth: raw.bandwidth,
    fqRate: raw.fqRate,
    noDelay: raw.noDelay,
    warmup: raw.warmup,
    duration: raw.duration,
    cooldown: raw.cooldown,
    noSync: raw.noSync,
    logFile: raw.logFile,
    xmlFile: raw.xmlFile,
    jsonFile: raw.jsonFile,
    quiet: raw.quiet,
    verbose: raw.verbose,
    showTcpRetrans: raw.showTcpRetrans,
    showNicPackets: raw.showNicPackets,
    showDevInterrupts: raw.showDevInterrupts,
  };
  const parsed = LinuxOptions.safeParse(input);
  if (!parsed.success) throw optionError(parsed.error, OPTION_FLAGS, { input, exitCode: LINUX_EXIT_ARGS, help: "see 'ntttcp -h'" }) ?? parsed.error;
  return parsed.data;
}
