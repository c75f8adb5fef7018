import { UserError } from "../../src/errors.ts";
import { optionError } from "../../src/option-error.ts";
import { MAX_DATAGRAM_BYTES, MAX_IO_BYTES } from "../../src/stream-spec.ts";
import { MigratedTest } from "../../interop/netperf/test-request.ts";
import { breakArgs, breakArgsExplicit, convert, portNumber, setHalves } from "./getopt.ts";
import { NetperfPlan } from "./plan.ts";
import { acceptedWithoutEffect, addressFamily, getoptSpec, parseWithTable, SHARED_OPTIONS, type OptionContext, type OptionTable, type Printed } from "./option-table.ts";
import { CRR_PORTS, omniTest, PAIRS_NOTE, RECV, testOptionDefaults, TEST_OPTIONS, XMIT, type TestKind } from "./test-options.ts";

/**
 * netperf 2.7.0's command line: global options, `--`, then the omni test options (docs/protocols/netperf.md §12). The
 * parsing follows netperf's own rules, quirks included: a single value sets both halves of most pairs (break_args),
 * `-m`/`-M` set only what is written, sizes take K/M/G (binary) and k/m/g (decimal) anywhere in the word, `-c`/`-C`
 * take an optional rate only when the next word starts with a digit, and `-o`/`-O`/`-k` take an optional list only when
 * the next word does not start with '-'.
 */

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

export type NetperfCommand = { kind: "run"; plan: NetperfPlan } | { kind: "classic"; test: ClassicTest; plan: NetperfPlan } | ({ kind: "print" } & Printed) | CalibrateCommand;

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
  const early: { print?: Printed } = {};
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
  if (classic && instances > 1) {
    throw new UserError(`netperf: --instances ${instances} with ${p.testName}: anyperf runs ${p.testName} once: drop --instances, or use it with a stream or request/response test`);
  }
  // netperf reads UUID's test options as omni's (scan_omni_args), the other classic tests' with scan_sockets_args.
  const kind: TestKind = omni ? "omni" : classic && classic !== "UUID" ? "classic" : "migrated";
  const options = testOptionDefaults(p.sendWidth);
  parseWithTable(argv, end, TEST_OPTIONS, "netperf", options, early, kind);
  const { direction, implicitDirection: _, protocol, connect, ...t } = options;
  {
    const pr = printed();
    if (pr) return { kind: "print", ...pr };
  }

  let test: MigratedTest;
  if (omni) {
    // netperf 2.7.0 runs `-t omni -- -r 1` (or `-m 1K,1K`) as request/response and `-M ,64K` as a receive test; an
    // explicit -d replaces what sizes before it implied and stops later ones adding to it. No bit at all is a send.
    if (direction === 0 && connect) {
      throw new UserError("netperf: -t omni -- -c without -d or -r is netperf's connect/close test (no data), which anyperf runs as -t TCP_CC: use that, or add -d rr for connect/request/response");
    }
    const omniDirection = direction === 0 ? XMIT : direction;
    if (typeof protocol === "object") throw new UserError(`netperf: test option -T ${protocol.other}: anyperf runs omni over tcp or udp only: use -T tcp or -T udp`);
    const transport = protocol ?? "tcp";
    const named = omniTest(omniDirection, transport, connect);
    if (!named) {
      throw new UserError(`netperf: -t omni with -d ${omniDirection & RECV ? "recv" : "send"}${connect ? " -c" : ""} over ${transport} is not supported by anyperf: use -d send, -d recv or -d rr (with -c for TCP connect/request/response)`);
    }
    test = named;
    // An omni test without -o/-O/-k prints the -O table.
    if (t.output === "legacy") t.output = "human";
  } else {
    test = parsed.data!;
    // netperf 2.7.0 runs a migrated test over -T's transport under the test's own name (TCP_STREAM -- -T udp sends
    // 65507-byte datagrams in a "TCP STREAM" table): a figure under the wrong name, so anyperf refuses the mix. A name
    // it does not know is IP's default for the test's socket type: the test's own transport.
    const own = test.startsWith("UDP") ? "udp" : "tcp";
    if (!classic && typeof protocol === "string" && protocol !== own) {
      const twin = MigratedTest.safeParse(`${protocol.toUpperCase()}${test.slice(3)}`);
      const use = twin.success ? `-t ${twin.data} or -t omni -- -T ${protocol}` : `-t omni -- -T ${protocol}`;
      throw new UserError(`netperf: test option -T ${protocol} with ${p.testName}: anyperf runs ${p.testName} over ${own} only: use ${use}`);
    }
  }
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
  requestSize: "-- -r", responseSize: "-- -r ,response", transportMss: "-- -G", socketBuffers: "-- -s", "socketBuffers.remote": "-- -S",
};

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

${PAIRS_NOTE}
* For these options taking two parms, specifying one value with no comma
will only set the first parms and will leave the second at the default
value. To set the second value it must be preceded with a comma or be a
comma-separated pair. This is to retain previous netperf behaviour.
`;
}
