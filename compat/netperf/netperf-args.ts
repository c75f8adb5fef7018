import { UserError } from "../../src/errors.ts";
import { optionError } from "../../src/option-error.ts";
import { MAX_DATAGRAM_BYTES, MAX_IO_BYTES } from "../../src/stream-spec.ts";
import { MigratedTest } from "../../interop/netperf/test-request.ts";
import { atoi, breakArgs, breakArgsExplicit, convert, getopt } from "./getopt.ts";
import { NetperfPlan, type OutputMode } from "./plan.ts";
import { selectorListing } from "./selectors.ts";
import { acceptedWithoutEffect, addressFamily, getoptSpec, parseWithTable, SHARED_OPTIONS, type OptionContext, type OptionTable } from "./option-table.ts";

/**
 * netperf 2.7.0's command line: global options, `--`, then the omni test options (docs/protocols/netperf.md §12). The
 * parsing follows netperf's own rules, quirks included: a single value sets both halves of most pairs (break_args),
 * `-m`/`-M` set only what is written, sizes take K/M/G (binary) and k/m/g (decimal) anywhere in the word, `-c`/`-C`
 * take an optional rate only when the next word starts with a digit, and `-o`/`-O`/`-k` take an optional list only when
 * the next word does not start with '-'.
 */

export const TEST_SPEC = "aBb:cCd:De:FgG:hH:i:Ij:kK:l:L:m:M:nNoOp:P:r:R:s:S:t:T:u:UVw:W:46";

/** netperf -D 0 would print on every send; interim lines come at most this often. */
const MIN_DEMO_INTERVAL_S = 0.01;

/** LOC_CPU / REM_CPU: no data test, only the CPU rate netperf would use (docs/protocols/netperf.md §2.6). */
export interface CalibrateCommand {
  kind: "calibrate";
  side: "local" | "remote";
  host: string;
  controlPort: number;
  family: "any" | "ipv4" | "ipv6";
  verbosity: number;
  passphrase: string | undefined;
}

/**
 * The tests netperf 2.7.0 runs with its classic messages, and the migrated test each is planned as: TCP_MSS (a
 * TCP_STREAM set-up that moves no data and prints the segment size), TCP_CC (connect and close, no byte moved) and
 * TCP_SENDFILE (a TCP_STREAM of the fill file); UUID runs no test (it prints the test's UUID once connected).
 */
const CLASSIC = { TCP_MSS: "TCP_STREAM", TCP_CC: "TCP_CRR", TCP_SENDFILE: "TCP_STREAM", UUID: "TCP_STREAM" } as const;
type ClassicTest = keyof typeof CLASSIC;
const isClassic = (name: string): name is ClassicTest => Object.hasOwn(CLASSIC, name);

export type NetperfCommand = { kind: "run"; plan: NetperfPlan } | { kind: "classic"; test: ClassicTest; plan: NetperfPlan } | { kind: "print"; text: string; exitCode: number } | CalibrateCommand;

/** netperf's NETPERF_XMIT / NETPERF_RECV direction bits (netsh.h), from netperf's own view. */
const XMIT = 0x2;
const RECV = 0x4;

/** netperf's parse_direction: names or strtol numbers, '|' joins them. */
function parseDirection(text: string): number {
  let bits = 0;
  for (const part of text.split("|")) {
    const w = part.toLowerCase();
    if (["xmit", "send", "stream", "transmit"].includes(w)) bits |= XMIT;
    else if (["recv", "receive", "maerts"].includes(w)) bits |= RECV;
    else if (w === "rr") bits |= XMIT | RECV;
    else if (w !== "") bits |= cNumber(w);
  }
  return bits;
}

/** strtol(s, NULL, 0): the leading number in any base C accepts, 0 when there is none. */
function cNumber(s: string): number {
  const m = /^\s*([-+]?)(0x[0-9a-f]+|0[0-7]*|[1-9]\d*)/i.exec(s);
  if (!m) return 0;
  const body = m[2]!;
  const v = /^0x/i.test(body) ? parseInt(body, 16) : body.startsWith("0") ? parseInt(body, 8) || 0 : parseInt(body, 10);
  return m[1] === "-" ? -v : v;
}

/** The classic test an omni direction/protocol/connect choice is the same as; undefined when anyperf runs none. */
function omniTest(direction: number, protocol: "tcp" | "udp", connect: boolean): MigratedTest | undefined {
  const sends = (direction & XMIT) !== 0;
  const receives = (direction & RECV) !== 0;
  // NETPERF_IS_RR: both bits, or neither.
  const rr = sends === receives;
  if (protocol === "udp") return connect ? undefined : rr ? "UDP_RR" : sends ? "UDP_STREAM" : undefined;
  if (rr) return connect ? "TCP_CRR" : "TCP_RR";
  if (connect) return undefined;
  return sends ? "TCP_STREAM" : "TCP_MAERTS";
}

/** Our extension; pulled out before netperf's own parsing since getopt would read "--instances" as `--`. */
function takeInstances(argv: string[]): { rest: string[]; instances: number } {
  const rest: string[] = [];
  let instances = 1;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    let v: string | undefined;
    if (w === "--instances") v = argv[++i];
    else if (w.startsWith("--instances=")) v = w.slice("--instances=".length);
    else {
      rest.push(w);
      continue;
    }
    if (v === undefined || !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 10000) {
      throw new UserError(`--instances needs a count from 1 to 10000, got '${v ?? ""}'`);
    }
    instances = Number(v);
  }
  return { rest, instances };
}


/** netperf's break_args on "a,b" (a lone value stands for both): each half given is parsed into its own field. */
function setHalves<K extends string>(target: Record<K, number>, keys: readonly [K, K], value: string, parse: (s: string) => number): void {
  const [first, second] = breakArgs(value);
  if (first) target[keys[0]] = parse(first);
  if (second) target[keys[1]] = parse(second);
}

/** IP_TOS value from a number (any base strtoul accepts) or a DSCP name (ef, afXY, csN). */
export function parseIpQos(text: string): number {
  const t = text.toLowerCase();
  const n = /^0x[0-9a-f]+$/.test(t) ? parseInt(t, 16) : /^0[0-7]+$/.test(t) ? parseInt(t, 8) : /^\d+$/.test(t) ? Number(t) : undefined;
  // The TOS byte: netperf would pass a wider int to setsockopt(IP_TOS) and the request's 32-bit field.
  if (n !== undefined && n > 255) throw new UserError(`netperf: -Y ${text}: an IP QoS value is 0..255 (or a DSCP name: ef, af11..af43, cs0..cs7)`);
  if (n !== undefined) return n;
  if (t === "ef") return 46 << 2;
  const af = /^af([1-4])([1-3])$/.exec(t);
  if (af) return ((Number(af[1]) * 8 + Number(af[2]) * 2) << 2) & 0xff;
  const cs = /^cs([0-7])$/.exec(t);
  if (cs) return (Number(cs[1]) * 8) << 2;
  throw new UserError(`netperf: unknown IP QoS '${text}': use a number or a DSCP name (ef, af11..af43, cs0..cs7)`);
}

function globalDefaults() {
  return {
    host: "",
    controlPort: 12865,
    localControlPort: undefined as number | undefined,
    localControlHost: undefined as string | undefined,
    family: "any" as "any" | "ipv4" | "ipv6",
    testName: "TCP_STREAM",
    testLength: 10,
    localCpu: false,
    localCpuRate: 0,
    remoteCpu: false,
    remoteCpuRate: 0,
    format: undefined as string | undefined,
    printHeaders: true,
    verbosity: 1,
    brand: undefined as string | undefined,
    passphrase: undefined as string | undefined,
    iterationMax: 1,
    iterationMin: 1,
    confidenceLevel: 0,
    confidenceInterval: 0,
    resultConfidenceOnly: false,
    demoIntervalS: undefined as number | undefined,
    align: { local: { send: 8, recv: 8 }, remote: { send: 8, recv: 8 } },
    offset: { local: { send: 0, recv: 0 }, remote: { send: 0, recv: 0 } },
    cpuAffinity: { local: -1, remote: -1 },
    socketPrio: { local: -1, remote: -1 },
    socketTos: { local: -1, remote: -1 },
    keepAlive: false,
    fillFile: { local: "", remote: "" },
    sendWidth: 0,
    recvWidth: 0,
    waitSeconds: 0,
  };
}
type GlobalState = ReturnType<typeof globalDefaults>;

/** -c/-C: an optional CPU rate, taken only when the next word starts with a digit. */
function cpuRate(c: OptionContext): number {
  const next = c.peek();
  if (next === undefined || !/^\d/.test(next)) return 0;
  c.consume();
  return Number.parseFloat(next) || 0;
}

/** netperf's global options (before `--`), applied to the plan in the order given. */
const GLOBAL_OPTIONS: OptionTable<GlobalState> = [
  ...SHARED_OPTIONS,
  { letters: "h", takesValue: false, apply: (_, c) => c.printOnce(netperfUsage(), 1) },
  { letters: "a", takesValue: true, apply: (p, c) => setHalves(p.align.local, ["send", "recv"], c.value, convert) },
  { letters: "A", takesValue: true, apply: (p, c) => setHalves(p.align.remote, ["send", "recv"], c.value, convert) },
  { letters: "o", takesValue: true, apply: (p, c) => setHalves(p.offset.local, ["send", "recv"], c.value, convert) },
  { letters: "O", takesValue: true, apply: (p, c) => setHalves(p.offset.remote, ["send", "recv"], c.value, convert) },
  { letters: "c", takesValue: false, apply: (p, c) => void ((p.localCpuRate = cpuRate(c)), (p.localCpu = true)) },
  { letters: "C", takesValue: false, apply: (p, c) => void ((p.remoteCpuRate = cpuRate(c)), (p.remoteCpu = true)) },
  { letters: "f", takesValue: true, apply: (p, c) => void (p.format = c.value[0]) },
  {
    letters: "F",
    takesValue: true,
    apply: (p, c) => {
      const [l, r] = breakArgsExplicit(c.value);
      // The local name has netperf's BUFSIZ buffer; only the remote one travels in a 32-byte field.
      if (l) p.fillFile.local = l.slice(0, 8191);
      if (r) {
        if (r.length > 31) throw new UserError("Remote fill file name must be less than 32 characters");
        p.fillFile.remote = r;
      }
    },
  },
  {
    letters: "HL",
    takesValue: true,
    apply: (p, c) => {
      const [h, fam] = breakArgsExplicit(c.value);
      if (h) p[c.letter === "H" ? "host" : "localControlHost"] = h;
      if (fam) p.family = addressFamily(fam);
    },
  },
  {
    letters: "i",
    takesValue: true,
    apply: (p, c) => {
      const [max, min] = breakArgs(c.value);
      if (max) p.iterationMax = convert(max);
      if (min) p.iterationMin = convert(min);
      if (p.iterationMax < p.iterationMin) p.iterationMax = p.iterationMin;
      p.iterationMax = Math.min(30, Math.max(3, p.iterationMax));
      p.iterationMin = Math.min(30, Math.max(3, p.iterationMin));
      if (p.confidenceLevel === 0) p.confidenceLevel = 99;
      if (p.confidenceInterval === 0) p.confidenceInterval = 0.05;
    },
  },
  {
    letters: "I",
    takesValue: true,
    apply: (p, c) => {
      const [level, width] = breakArgs(c.value);
      if (level) p.confidenceLevel = convert(level);
      if (p.confidenceLevel !== 95 && p.confidenceLevel !== 99) throw new UserError("Only 95% and 99% confidence level is supported");
      if (width) p.confidenceInterval = Number.parseFloat(width) / 100 || 0;
      if (p.iterationMin === 1) p.iterationMin = 3;
      if (p.iterationMax === 1) p.iterationMax = 10;
      if (p.confidenceInterval === 0) p.confidenceInterval = 0.05;
    },
  },
  { letters: "l", takesValue: true, apply: (p, c) => void (p.testLength = convert(c.value)) },
  { letters: "P", takesValue: true, apply: (p, c) => void (p.printHeaders = convert(c.value) !== 0) },
  {
    letters: "p",
    takesValue: true,
    apply: (p, c) => {
      const [port, lport] = breakArgsExplicit(c.value);
      if (port) p.controlPort = portNumber(port, "-p", 1);
      if (lport) p.localControlPort = portNumber(lport, "-p ,local");
    },
  },
  { letters: "S", takesValue: false, apply: (p) => void (p.keepAlive = true) },
  { letters: "s", takesValue: true, apply: (p, c) => void (p.waitSeconds = Math.max(0, convert(c.value))) },
  { letters: "t", takesValue: true, apply: (p, c) => void (p.testName = c.value.toUpperCase()) },
  { letters: "T", takesValue: true, apply: (p, c) => setHalves(p.cpuAffinity, ["local", "remote"], c.value, convert) },
  { letters: "v", takesValue: true, apply: (p, c) => void (p.verbosity = convert(c.value)) },
  {
    letters: "W",
    takesValue: true,
    apply: (p, c) => {
      const [s, r] = breakArgs(c.value);
      if (s) p.sendWidth = Math.max(0, convert(s));
      if (r) p.recvWidth = Math.max(0, convert(r));
    },
  },
  { letters: "y", takesValue: true, apply: (p, c) => setHalves(p.socketPrio, ["local", "remote"], c.value, convert) },
  { letters: "Y", takesValue: true, apply: (p, c) => setHalves(p.socketTos, ["local", "remote"], c.value, parseIpQos) },
  { letters: "B", takesValue: true, apply: (p, c) => void (p.brand = c.value) },
  { letters: "r", takesValue: false, apply: (p) => void (p.resultConfidenceOnly = true) },
  {
    letters: "D",
    takesValue: true,
    apply: (p, c) => {
      // atof() of the first part, 1 s when it is empty; a negative interval only asks for exact timestamps.
      const [interval] = breakArgsExplicit(c.value);
      const s = interval ? Math.abs(Number.parseFloat(interval) || 0) : 1;
      p.demoIntervalS = Math.max(MIN_DEMO_INTERVAL_S, s);
    },
  },
  {
    letters: "N",
    takesValue: false,
    apply: () => {
      throw new UserError("netperf -N (no control connection) is not supported by anyperf: run anyperf netserver on the peer");
    },
  },
  // -b -d -j -k -K -n -w: accepted and, as in this netperf build, without effect on the tests we run.
  ...acceptedWithoutEffect<GlobalState>("dj", "bkKnw"),
];

export const GLOBAL_SPEC = getoptSpec(GLOBAL_OPTIONS);

export function parseNetperfArgs(argvIn: readonly string[]): NetperfCommand {
  const { rest: argv, instances } = takeInstances([...argvIn]);
  const commandLine = ["netperf", ...argvIn].join(" ");
  const p = globalDefaults();
  const early: { print?: { text: string; exitCode: number } } = {};
  // Read through a function: the handlers below set it, which flow analysis cannot see.
  const printed = () => early.print;

  const end = parseWithTable(argv, 0, GLOBAL_OPTIONS, "netperf", p, early);
  {
    const pr = printed();
    if (pr) return { kind: "print", ...pr };
  }

  const omni = p.testName === "OMNI";
  const classic = isClassic(p.testName) ? p.testName : undefined;
  const calibrate = p.testName === "LOC_CPU" ? "local" : p.testName === "REM_CPU" ? "remote" : undefined;
  const parsed = MigratedTest.safeParse(classic ? CLASSIC[classic] : p.testName);
  if (!parsed.success && !omni && !calibrate) {
    throw new UserError(`netperf: test '${p.testName}' is not supported by anyperf: use TCP_STREAM, TCP_MAERTS, UDP_STREAM, TCP_RR, TCP_CRR, UDP_RR, omni, TCP_MSS, TCP_CC, TCP_SENDFILE, LOC_CPU, REM_CPU or UUID`);
  }
  if (calibrate) {
    // netperf runs these before it reads the test options, so none of them matter.
    const host = p.host || (p.family === "ipv6" ? "::1" : "localhost");
    return { kind: "calibrate", side: calibrate, host, controlPort: p.controlPort, family: p.family, verbosity: p.verbosity, passphrase: p.passphrase };
  }
  // `direction`: undefined until -d names one; omni then sends, or runs request/response when -r gave sizes.
  const o = { direction: undefined as number | undefined, sizesGiven: false, protocol: "tcp" as "tcp" | "udp", connect: false };
  const t = {
    localSendSize: 0,
    remoteSendSize: -1,
    localRecvSize: 0,
    remoteRecvSize: -1,
    requestSize: -1,
    responseSize: -1,
    socketBuffers: { local: { send: -1, recv: -1 }, remote: { send: -1, recv: -1 } },
    noDelay: false,
    localDataPort: 0,
    remoteDataPort: 0,
    clientPortMin: CRR_PORTS.min,
    clientPortMax: CRR_PORTS.max,
    routingAllowed: undefined as boolean | undefined,
    dataFamily: "any" as "any" | "ipv4" | "ipv6",
    remoteDataAddress: undefined as string | undefined,
    localDataAddress: undefined as string | undefined,
    congestion: { local: "", remote: "" },
    firstBurst: 0,
    receiveTimeout: 0,
    output: "legacy" as OutputMode,
    outputSelection: undefined as string | undefined,
    uuid: undefined as string | undefined,
    useSendfile: false,
    fastOpen: false,
    pktinfo: false,
    deferAccept: false,
  };
  const outputOption = (mode: OutputMode, peek: () => string | undefined, consume: () => void) => {
    t.output = mode;
    t.outputSelection = undefined;
    const next = peek();
    if (next !== undefined && !next.startsWith("-")) {
      consume();
      if (next === "?") early.print ??= { text: selectorListing(mode !== "human"), exitCode: 1 };
      else t.outputSelection = next;
    }
  };
  getopt(argv, end, TEST_SPEC, "netperf", ({ letter, value = "" }, peek, consume) => {
    switch (letter) {
      case "4":
        t.dataFamily = "ipv4";
        return;
      case "6":
        t.dataFamily = "ipv6";
        return;
      case "h":
        early.print ??= { text: omniUsage(), exitCode: 1 };
        return;
      case "a":
        t.deferAccept = true;
        return;
      case "B":
        t.pktinfo = true;
        return;
      case "b":
        t.firstBurst = Math.max(0, atoi(value));
        return;
      case "D":
        t.noDelay = true;
        return;
      case "e":
        t.receiveTimeout = Math.max(0, atoi(value));
        return;
      case "F":
        t.fastOpen = true;
        return;
      case "H":
      case "L": {
        const [addr, fam] = breakArgsExplicit(value);
        if (addr) t[letter === "H" ? "remoteDataAddress" : "localDataAddress"] = breakArgsExplicit(addr, "/")[0] || undefined;
        if (fam) t.dataFamily = addressFamily(fam);
        return;
      }
      case "k":
        outputOption("keyval", peek, consume);
        return;
      case "o":
        outputOption("csv", peek, consume);
        return;
      case "O":
        outputOption("human", peek, consume);
        return;
      case "K": {
        const [l, r] = breakArgs(value);
        if (l) t.congestion.local = l.slice(0, 15);
        // netperf 2.7.0 tests the third character of the remote name (a bug we keep): shorter names are ignored.
        if (r.length >= 3) t.congestion.remote = r.slice(0, 15);
        return;
      }
      case "m": {
        const [l, r] = breakArgsExplicit(value);
        if (l) t.localSendSize = Math.max(0, convert(l));
        if (r) t.remoteSendSize = convert(r);
        return;
      }
      case "M": {
        const [r, l] = breakArgsExplicit(value);
        if (r) t.remoteRecvSize = convert(r);
        if (l) t.localRecvSize = Math.max(0, convert(l));
        return;
      }
      case "p": {
        const [min, max] = breakArgs(value);
        if (min) t.clientPortMin = portNumber(min, "-p min");
        if (max) t.clientPortMax = portNumber(max, "-p ,max");
        return;
      }
      case "P": {
        const [l, r] = breakArgs(value);
        if (l) t.localDataPort = portNumber(l, "-P local");
        if (r) t.remoteDataPort = portNumber(r, "-P ,remote");
        return;
      }
      case "r":
        setHalves(t, ["requestSize", "responseSize"], value, convert);
        o.sizesGiven = true;
        return;
      case "R":
        t.routingAllowed = atoi(value) !== 0;
        return;
      case "s":
      case "S":
        setHalves(letter === "s" ? t.socketBuffers.local : t.socketBuffers.remote, ["send", "recv"], value, convert);
        return;
      case "u":
        t.uuid = value.slice(0, 37);
        return;
      case "W":
        p.sendWidth = Math.max(0, convert(value));
        return;
      case "c":
        o.connect = true;
        return;
      case "d":
        // netperf reads -d only for an actual omni test.
        if (omni) o.direction = parseDirection(value);
        return;
      case "T": {
        if (!omni) return;
        const proto = value.slice(0, 9).toLowerCase();
        if (proto !== "tcp" && proto !== "udp") throw new UserError(`netperf: test option -T ${value}: anyperf runs omni over tcp or udp only: use -T tcp or -T udp`);
        o.protocol = proto;
        return;
      }
      case "t":
        throw new UserError(`netperf: test option -t is not supported by anyperf: name the test with the global -t`);
      default:
        // -C -g -G -i -I -j -l -n -N -U -V -w: accepted; they do not change the tests anyperf runs.
        return;
    }
  });
  {
    const pr = printed();
    if (pr) return { kind: "print", ...pr };
  }

  let test: MigratedTest;
  if (omni) {
    // netperf 2.7.0 runs `-t omni -- -r 1` as request/response; an explicit -d wins, before or after -r.
    const direction = o.direction ?? (o.sizesGiven ? XMIT | RECV : XMIT);
    const named = omniTest(direction, o.protocol, o.connect);
    if (!named) {
      throw new UserError(`netperf: -t omni with -d ${direction & RECV ? "recv" : "send"}${o.connect ? " -c" : ""} over ${o.protocol} is not supported by anyperf: use -d send, -d recv or -d rr (with -c for TCP connect/request/response)`);
    }
    test = named;
    // An omni test without -o/-O/-k prints the -O table.
    if (t.output === "legacy") t.output = "human";
  } else test = parsed.data!;
  const rr = test.endsWith("RR");
  if (rr) {
    if (t.requestSize <= 0) t.requestSize = 1;
    if (t.responseSize <= 0) t.responseSize = 1;
  }
  // netperf would allocate any size; one read or write here is at most MAX_IO_BYTES, a datagram MAX_DATAGRAM_BYTES.
  const udp = test.startsWith("UDP");
  const maxIo = udp ? MAX_DATAGRAM_BYTES : MAX_IO_BYTES;
  for (const [size, flag] of [[t.localSendSize, "-m"], [t.localRecvSize, "-M ,local"], [t.requestSize, "-r"], [t.responseSize, "-r ,response"]] as const) {
    if (size > maxIo) {
      throw new UserError(`netperf: -- ${flag} ${size} is above ${maxIo} bytes, ${udp ? "the largest UDP datagram" : "anyperf's largest read or write"}: pass a smaller size`);
    }
  }
  if (p.testLength < 0 && test.startsWith("UDP")) {
    throw new UserError("netperf: -l with a count (-l -N) needs a TCP test; UDP tests run by time");
  }
  if (p.format === "x" && !rr) p.format = "m";
  const host = p.host || (p.family === "ipv6" ? "::1" : "localhost");
  const input = { ...p, ...t, host, test, omni, instances, commandLine };
  const plan = NetperfPlan.safeParse(input);
  if (!plan.success) throw optionError(plan.error, PLAN_FLAGS, { input, exitCode: 1, help: "see netperf -h" }) ?? plan.error;
  return classic ? { kind: "classic", test: classic, plan: plan.data } : { kind: "run", plan: plan.data };
}

/** The flag that sets each plan field the schema bounds, for messages (test-specific ones after --). */
const PLAN_FLAGS: Record<string, string> = {
  host: "-H", controlPort: "-p", localControlPort: "-p ,local", passphrase: "-Z", iterationMax: "-i", iterationMin: "-i ,min",
  demoIntervalS: "-D", sendWidth: "-w", recvWidth: "-W", waitSeconds: "-s", localSendSize: "-- -m", localRecvSize: "-- -M",
  localDataPort: "-- -P", remoteDataPort: "-- -P ,remote", clientPortMin: "-- -p", clientPortMax: "-- -p ,max", firstBurst: "-- -b",
  format: "-f", receiveTimeout: "-- -T", testLength: "-l", verbosity: "-v", confidenceLevel: "-I", confidenceInterval: "-I ,width",
  localCpuRate: "-c", remoteCpuRate: "-C", align: "-a", "align.remote": "-A", offset: "-o", "offset.remote": "-O",
  cpuAffinity: "-T", socketPrio: "-y", socketTos: "-Y", remoteSendSize: "-- -m ,remote", remoteRecvSize: "-- -M",
  requestSize: "-- -r", responseSize: "-- -r ,response", socketBuffers: "-- -s", "socketBuffers.remote": "-- -S",
};

/** netperf's TCP_CRR local port range when -p is not given. */
const CRR_PORTS = { min: 5000, max: 65535 };

/**
 * One line on stderr for each option anyperf reads but cannot honour yet, so a result is never silently different
 * from what was asked for.
 */
export function unappliedOptionNotes(plan: NetperfPlan): string[] {
  const notes: string[] = [];
  if (plan.test === "TCP_CRR" && (plan.clientPortMin !== CRR_PORTS.min || plan.clientPortMax !== CRR_PORTS.max)) {
    notes.push(`anyperf netperf: test option -p ${plan.clientPortMin},${plan.clientPortMax} is not applied: each ${plan.testName} connection takes an ephemeral local port\n`);
  }
  if (plan.testName === "TCP_SENDFILE" && plan.iterationMax > 1) {
    notes.push("anyperf netperf: -i is not applied to TCP_SENDFILE: it runs once (use TCP_STREAM for confidence intervals)\n");
  }
  return notes;
}

function portNumber(text: string, what: string, min = 0): number {
  const n = atoi(text);
  if (n < min || n > 65535) throw new UserError(`netperf: ${what} port ${text} is outside ${min}..65535`);
  return n;
}

export function netperfUsage(): string {
  return `
Usage: netperf [global options] -- [test options] 

Global options:
    -a send,recv      Set the local send,recv buffer alignment
    -A send,recv      Set the remote send,recv buffer alignment
    -B brandstr       Specify a string to be emitted with brief output
    -c [cpu_rate]     Report local CPU usage
    -C [cpu_rate]     Report remote CPU usage
    -f G|M|K|g|m|k    Set the output units
    -F lfill[,rfill]* Pre-fill buffers with data from specified file
    -h                Display this text
    -H name|ip,fam *  Specify the target machine and/or local ip and family
    -i max,min        Specify the max and min number of iterations (15,1)
    -I lvl[,intvl]    Specify confidence level (95 or 99) (99) 
                      and confidence interval in percentage (10)
    -l testlen        Specify test duration (>0 secs) (<0 bytes|trans)
    -L name|ip,fam *  Specify the local ip|name and address family
    -o send,recv      Set the local send,recv buffer offsets
    -O send,recv      Set the remote send,recv buffer offset
    -p port,lport*    Specify netserver port number and/or local port
    -P 0|1            Don't/Do display test headers
    -s seconds        Wait seconds between test setup and test start
    -S                Set SO_KEEPALIVE on the data connection
    -t testname       Specify test to perform
    -T lcpu,rcpu      Request netperf/netserver be bound to local/remote cpu
    -v verbosity      Specify the verbosity level
    -W send,recv      Set the number of send,recv buffers
    -v level          Set the verbosity level (default 1, min 0)
    -V                Display the netperf version and exit
    -y local,remote   Set the socket priority
    -Y local,remote   Set the IP_TOS. Use hexadecimal.
    -Z passphrase     Set and pass to netserver a passphrase
    --instances N     (anyperf) run N independent tests; their sum, and over the window all ran

For those options taking two parms, at least one must be specified;
specifying one value without a comma will set both parms to that
value, specifying a value with a leading comma will set just the second
parm, a value with a trailing comma will set just the first. To set
each parm to unique values, specify both and separate them with a
comma.

* For these options taking two parms, specifying one value with no comma
will only set the first parms and will leave the second at the default
value. To set the second value it must be preceded with a comma or be a
comma-separated pair. This is to retain previous netperf behaviour.
`;
}

function omniUsage(): string {
  return `
Usage: netperf [global options] -- [test options] 

OMNI and Migrated BSD Sockets Test Options:
    -b number         Send number requests at start of _RR tests
    -D [L][,R]        Set TCP_NODELAY locally and/or remotely (TCP_*)
    -h                Display this text
    -H name[/mask],fam  Use name (or IP) and family as target of data connection
    -k [file]         Generate keyval output optionally based on file
                      Use filename of '?' to get the list of choices
    -K [lcong][,rcong] Specify the local and/or remote congestion control
    -L name[/mask],fam  Use name (or IP) and family as source of data connection
    -m bytes          Set the send size (TCP_STREAM, UDP_STREAM)
    -M bytes          Set the recv size (TCP_STREAM, UDP_STREAM)
    -o [file]         Generate CSV output optionally based on file
                      Use filename of '?' to get the list of choices
    -O [file]         Generate classic-style output based on file
                      Use filename of '?' to get the list of choices
    -p min[,max]      Set the min/max port numbers for TCP_CRR, TCP_TRR
    -P local[,remote] Set the local/remote port for the data socket
    -r req,[rsp]      Set request/response sizes (TCP_RR, UDP_RR)
    -R 0/1            Allow routing of traffic on data connection.
                      Default: 0 (off) for UDP_STREAM, 1 (on) otherwise
    -s send[,recv]    Set local socket send/recv buffer sizes
    -S send[,recv]    Set remote socket send/recv buffer sizes
    -u uuid           Use the supplied string as the UUID for this test.
    -4                Use AF_INET (eg IPv4) on both ends of the data conn
    -6                Use AF_INET6 (eg IPv6) on both ends of the data conn

For those options taking two parms, at least one must be specified;
specifying one value without a comma will set both parms to that
value, specifying a value with a leading comma will set just the second
parm, a value with a trailing comma will set just the first. To set
each parm to unique values, specify both and separate them with a
comma.
`;
}
