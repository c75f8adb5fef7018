/**
 * The command lines the argv fuzzer (argv.test.ts) writes: every mode's flag set, taken from the module that parses
 * it where that module has a table (iperf3's OPTIONS, iperf 2's parseArgs options, netperf's and netserver's getopt
 * strings, ntttcp-for-linux's getopt string, loopback's parseArgs options, the global options), and random values
 * for them: numbers out of range, negative, huge, empty, garbage, names, sizes and rates with suffixes, paths.
 *
 * Every case runs in a network namespace of its own test with only loopback (argv.test.ts), so a value read as a
 * host can reach nothing else; hosts are still drawn from loopback spellings, and ports from this suite's range.
 */
import fc from "fast-check";
import { OPTIONS as IPERF2_OPTIONS } from "../../compat/iperf2/args.ts";
import { OPTIONS as IPERF3_OPTIONS } from "../../compat/iperf3/options.ts";
import { GLOBAL_SPEC } from "../../compat/netperf/netperf-args.ts";
import { TEST_SPEC } from "../../compat/netperf/test-options.ts";
import { NETSERVER_SPEC } from "../../compat/netperf/netserver-args.ts";
import { LINUX_LONG, LINUX_SHORT } from "../../compat/ntttcp/linux-args.ts";
import { POLICY_FLAGS } from "../../src/access/server-policy.ts";
import { LOOPBACK_OPTIONS } from "../../src/native/loopback-cli.ts";
import { CLIENT_OPTIONS } from "../../src/native/client-cli.ts";

export type ArgKind = "none" | "required" | "optional";
/** What a flag's value means, so the generator can lean towards values that reach deeper checks. */
type ValueKind = "port" | "host" | "path" | "any";

export interface Flag {
  /** As typed: "-p", "--port", "-rb". */
  spelling: string;
  arg: ArgKind;
  value: ValueKind;
}

/** Ports of this suite (36000-36999): each case gets its own; the dialect servers argv.test.ts starts sit at the top. */
export const CASE_PORT_BASE = 36000;
export const CASE_PORTS = 400;
export const SERVER_PORTS = { iperf3: 36991, iperf: 36992, netserver: 36993, ntttcp: 36950 } as const;

const PORT_FLAGS = /^-(p|L|P|sp)$|^--(port|cport|listenport|http)$/;
const HOST_FLAGS = /^-(c|H|B|a|r|s|m)$|^--(client|bind|bind-dev)$/;
const PATH_FLAGS = /^-(I|F|o|x|j|O|xml)$|^--(logfile|pidfile|file|csv|output)$/;

function flag(spelling: string, arg: ArgKind): Flag {
  const value: ValueKind = PORT_FLAGS.test(spelling) ? "port" : HOST_FLAGS.test(spelling) ? "host" : PATH_FLAGS.test(spelling) ? "path" : "any";
  return { spelling, arg, value };
}

/** A getopt string ("ab:c::") as flags. */
function fromGetopt(spec: string): Flag[] {
  const out: Flag[] = [];
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i]!;
    const arg: ArgKind = spec[i + 1] === ":" ? (spec[i + 2] === ":" ? "optional" : "required") : "none";
    out.push(flag(`-${c}`, arg));
    i += arg === "none" ? 0 : arg === "required" ? 1 : 2;
  }
  return out;
}

/** parseArgs-style options ({ name: { type, short } }) as long and short flags. */
function fromParseArgs(options: Record<string, { type: string; short?: string }>): Flag[] {
  return Object.entries(options).flatMap(([name, o]) => {
    const arg: ArgKind = o.type === "string" ? "required" : "none";
    return [flag(`--${name}`, arg), ...(o.short ? [flag(`-${o.short}`, arg)] : [])];
  });
}

const GLOBAL: Flag[] = [
  ...Object.values(POLICY_FLAGS).map((f) => flag(f, "required")),
  flag("--http", "required"),
  flag("--http-token", "required"),
  flag("--linger", "required"),
];

/** NTttcp for Windows' flags (windows-args.ts keeps them in a handler table local to its parser). */
const WINDOWS_FLAGS = [
  "-s", "-r", "-m", "-l", "-n", "-t", "-wu", "-cd", "-p", "-sp", "-ns", "-to", "-a", "-rb", "-sb", "-ndl", "-u", "-uc",
  "-uso", "-uro", "-w", "-x", "-rt", "-d", "-wa", "-6", "-hv", "-nic", "-na", "-xml", "-v", "-hpt", "-nsb", "-thr", "-brn",
  "-lm", "-icp", "-cfi", "-es", "-sam", "-qos", "-jm", "-ps", "-f", "-?",
].map((s) => flag(s, "optional"));

export interface Mode {
  /** What argv.test.ts reports under. */
  name: string;
  /** The words after `anyperf`. */
  prefix: string[];
  flags: Flag[];
  /** Words that set a role, one of which most cases start with. */
  roles: string[][];
  /** The port flag, pinned to the case's own port before the random words (a random one may replace it). */
  portFlag?: string;
  server?: keyof typeof SERVER_PORTS;
  /** netperf: test-specific flags after `--`. */
  testFlags?: Flag[];
}

export const MODES: Mode[] = [
  {
    name: "iperf3",
    prefix: ["iperf3"],
    flags: [
      ...Object.entries(IPERF3_OPTIONS).flatMap(([name, d]) => [flag(`--${name}`, d.arg), ...(d.short ? [flag(`-${d.short}`, d.arg)] : [])]),
      ...GLOBAL,
    ],
    roles: [["-s"], ["-c", "127.0.0.1"], ["-c", "::1"], []],
    portFlag: "-p",
    server: "iperf3",
  },
  {
    name: "iperf",
    prefix: ["iperf"],
    flags: [...fromParseArgs(IPERF2_OPTIONS), ...GLOBAL],
    roles: [["-s"], ["-s", "-u"], ["-c", "127.0.0.1"], ["-c", "localhost", "-u"], []],
    portFlag: "-p",
    server: "iperf",
  },
  {
    name: "netperf",
    prefix: ["netperf"],
    flags: [...fromGetopt(GLOBAL_SPEC), ...GLOBAL],
    testFlags: fromGetopt(TEST_SPEC),
    roles: [["-H", "127.0.0.1"], ["-H", "localhost"], ["-H", "::1", "-6"], []],
    portFlag: "-p",
    server: "netserver",
  },
  {
    name: "netserver",
    prefix: ["netserver"],
    flags: [...fromGetopt(NETSERVER_SPEC), ...GLOBAL],
    roles: [["-D"], ["-D", "-L", "127.0.0.1"], []],
    portFlag: "-p",
  },
  {
    name: "ntttcp",
    prefix: ["ntttcp"],
    flags: [...fromGetopt(LINUX_SHORT), ...Object.entries(LINUX_LONG).map(([n, a]) => flag(`--${n}`, a)), ...GLOBAL],
    roles: [["-r127.0.0.1"], ["-s127.0.0.1"], ["-r"], ["-s", "127.0.0.1"], ["-6", "-r::1"], []],
    portFlag: "-p",
    server: "ntttcp",
  },
  {
    name: "ntttcp-windows",
    prefix: ["ntttcp", "--windows"],
    flags: [...WINDOWS_FLAGS, ...GLOBAL],
    roles: [["-r", "-m", "1,*,127.0.0.1"], ["-s", "-m", "1,*,127.0.0.1"], ["-s", "-m", "2,0,localhost"], []],
    portFlag: "-p",
  },
  {
    // No `anyperf serve` in the namespace: the client is refused at connect, after its options were read.
    name: "client",
    prefix: ["client"],
    flags: [...fromParseArgs(CLIENT_OPTIONS), ...GLOBAL],
    roles: [["127.0.0.1"], ["::1"], ["[::1]"], ["localhost"], []],
    portFlag: "-p",
  },
  {
    name: "loopback",
    prefix: ["loopback"],
    flags: [...fromParseArgs(LOOPBACK_OPTIONS), ...GLOBAL],
    roles: [[], ["-t", "1"]],
  },
];

const NUMBERS = [
  "0", "1", "-1", "-5", "2", "7", "1.5", "-0", "0.0001", "1e3", "1e309", "-1e309", "NaN", "Infinity", "0x10", "010", "65535",
  "65536", "99999999", "31536001", "2147483647", "2147483648", "4294967296", "9007199254740993", "-2147483649",
];
const SIZES = ["1K", "1k", "64K", "1M", "1m", "1G", "1g", "1T", "16E", "-1M", "0K", "1Q", "K", "1.5M", "100pps", "1G/5", "10M/0", "0/1"];
const LISTS = ["1,1", "1,*,127.0.0.1", "0,*,127.0.0.1", "99999,*,127.0.0.1", "1,99,127.0.0.1", ",", ",,", "a,b,c", "1,", ",1", "1-2", "1/2"];
const HOSTS = ["127.0.0.1", "::1", "localhost", "127.0.0.2", "[::1]", "127.0.0.1%lo", "", "0", "127.1", "::", "0.0.0.0", "not-a-host.invalid", "1.2.3"];
const PATHS = ["out.json", "x.csv", "missing/dir/x", "/nonexistent/dir/x", ".", "", "a b", "-", "pid"];

/** A port for this case, one of the dialect servers', or a value no port parser should take. */
function portArb(own: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(String(own), ...Object.values(SERVER_PORTS).map(String)) },
    { weight: 2, arbitrary: fc.constantFrom("0", "-1", "65536", "99999", "", "abc", "1e3", `${own},${own + 1}`, `,${own}`, `${own},`) },
  );
}

const garbage = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.stringMatching(/^[-+.,:/*%0-9a-zA-Z]{1,10}$/),
  fc.constant("9".repeat(400)),
  fc.constant("\u00e9\u4e2d\ud83d\ude00"),
);

function valueArb(kind: ValueKind, own: number): fc.Arbitrary<string> {
  const common = [
    { weight: 4, arbitrary: fc.constantFrom(...NUMBERS) },
    { weight: 2, arbitrary: fc.constantFrom(...SIZES) },
    { weight: 1, arbitrary: fc.constantFrom(...LISTS) },
    { weight: 1, arbitrary: fc.integer({ min: -1000, max: 100_000 }).map(String) },
    { weight: 1, arbitrary: garbage },
  ];
  switch (kind) {
    case "port":
      return fc.oneof({ weight: 6, arbitrary: portArb(own) }, ...common);
    case "host":
      return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...HOSTS) }, ...common);
    case "path":
      return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...PATHS) }, ...common);
    default:
      return fc.oneof(...common, { weight: 1, arbitrary: fc.constantFrom(...HOSTS, ...PATHS) });
  }
}

/** One flag with its value, written in one of the ways its parser accepts (separate word, attached, `=`). */
function wordsArb(f: Flag, own: number): fc.Arbitrary<string[]> {
  if (f.arg === "none") return fc.constant([f.spelling]);
  return fc.tuple(valueArb(f.value, own), fc.nat({ max: 9 })).map(([v, how]) => {
    if (f.arg === "optional" && how < 3) return [f.spelling];
    if (how === 9 && f.spelling.startsWith("--")) return [`${f.spelling}=${v}`];
    if (how === 8 && !f.spelling.startsWith("--") && v !== "") return [`${f.spelling}${v}`];
    return [f.spelling, v];
  });
}

export interface ArgvCase {
  mode: string;
  argv: string[];
  port: number;
}

/**
 * Command lines that crashed once (issue 21 item 15), run before the sweep in every run. The dialect servers sit on
 * SERVER_PORTS: netserver's port 36993 is the busy sync port (base − 1) of the ntttcp receivers on 36994.
 */
export const REGRESSIONS: string[][] = [
  ...["iperf3 -s", "iperf -s", "netserver -D", "ntttcp -r127.0.0.1", "loopback"].flatMap((m) => [
    [...m.split(" "), "--max-tests", "65536"],
    [...m.split(" "), "--max-streams", "99999999"],
    [...m.split(" "), "--max-duration", "31536001"],
  ]),
  ["iperf3", "-c", ""],
  ["iperf3", "-c", "", "-p", "36001"],
  ["ntttcp", "-r", "127.0.0.1", "-b", "1G", "-p", "36002", "-t", "1"],
  ["ntttcp", "-s127.0.0.1", "-b", "1G", "-p", "36002", "-t", "1"],
  ["ntttcp", "--windows", "-r", "-m", "1,*,127.0.0.1", "-l", "100M", "-p", "36003", "-t", "1"],
  ["netperf", "-H", "127.0.0.1", "-p", String(SERVER_PORTS.netserver), "-l", "1", "--", "-H", "localhost"],
  ["netperf", "-H", "127.0.0.1", "-p", String(SERVER_PORTS.netserver), "-l", "1", "--", "-L", "localhost,4"],
  ["netperf", "-H", "127.0.0.1", "-p", String(SERVER_PORTS.netserver), "-l", "1", "--", "-m", "1G"],
  ["netperf", "-H", "127.0.0.1", "-p", String(SERVER_PORTS.netserver), "-l", "1", "-t", "UDP_STREAM", "--", "-m", "1G"],
  ["netperf", "-p", "36066", "-p", "\u00e9\u4e2d"],
  ["netperf", "-H", "::1", "-6", "-p", String(SERVER_PORTS.netserver), "-Y", "4294967296"],
  ["ntttcp", "-r127.0.0.1", "-p", String(SERVER_PORTS.netserver + 1), "-P", "1", "-t", "2"],
  ["ntttcp", "-6", "-r::1", "-p", String(SERVER_PORTS.netserver + 1), "-P", "1", "-t", "2"],
  ["iperf", "-c", "localhost", "-u", "-p", "36004", "-t", "2147483648"],
  ["ntttcp", "-r", "-p", "36106", "--fq-rate-limit", "-5"],
  ["iperf", "-c", "localhost", "-u", "-p", "36320", "--len=31536001"],
  ["iperf", "-s", "-u", "-p", "36321", "-l", "100000"],
  ["ntttcp", "-p", "36107", "-n", "1e309", "-B", "9".repeat(400)],
  ["iperf3", "-s", "-I", "9".repeat(300)],
  ["loopback", "--csv", `${"a".repeat(300)}/x`],
  ["loopback", "-t", "-5"],
  ["loopback", "-l", "0"],
];

/** The case's own port, and the port it asks for: its own, or the dialect server's when it plays a client. */
function portsFor(mode: Mode, index: number, toServer: boolean): { own: number; pinned: string[] } {
  const own = CASE_PORT_BASE + ((index * 7) % CASE_PORTS);
  const port = toServer && mode.server ? SERVER_PORTS[mode.server] : own;
  return { own, pinned: mode.portFlag ? [mode.portFlag, String(port)] : [] };
}

/** A whole command line for `mode`: role, pinned port, then 0-6 random flags (netperf: and test flags after --). */
export function caseArb(mode: Mode, index: number): fc.Arbitrary<ArgvCase> {
  const { own } = portsFor(mode, index, false);
  const flags = fc.array(fc.constantFrom(...mode.flags).chain((f) => wordsArb(f, own)), { maxLength: 6 });
  const tests = mode.testFlags
    ? fc.option(fc.array(fc.constantFrom(...mode.testFlags).chain((f) => wordsArb(f, own)), { maxLength: 4 }), { freq: 2 })
    : fc.constant(null);
  // A stray word now and then: positionals, a lone '-', '--', a flag that does not exist.
  const stray = fc.option(fc.constantFrom("-", "--", "x", "-Z9", "--nope", "-?", "--help", "-h"), { freq: 8 });
  const role = fc.constantFrom(...mode.roles);
  const server = mode.server ? fc.boolean() : fc.constant(false);
  return fc.tuple(role, flags, tests, stray, server).map(([r, fl, t, s, toServer]) => {
    const { pinned } = portsFor(mode, index, toServer);
    const argv = [...mode.prefix, ...r, ...pinned, ...fl.flat(), ...(s === null ? [] : [s]), ...(t === null ? [] : ["--", ...t.flat()])];
    return { mode: mode.name, argv, port: own };
  });
}

/**
 * One case per flag of every mode (netperf's test flags after `--`): a working command line with that one flag
 * given a random value. Most faults sit behind one bad value, and this reaches every flag in a few hundred cases.
 */
export function sweepCases(seed: number): ArgvCase[] {
  const out: ArgvCase[] = REGRESSIONS.map((argv) => ({ mode: argv[0] === "ntttcp" && argv[1] === "--windows" ? "ntttcp-windows" : argv[0]!, argv, port: 0 }));
  for (const mode of MODES) {
    const all = [...mode.flags.map((f) => ({ f, test: false })), ...(mode.testFlags ?? []).map((f) => ({ f, test: true }))];
    for (const { f, test } of all) {
      const index = out.length;
      const { own } = portsFor(mode, index, false);
      const arb = fc.tuple(fc.constantFrom(...mode.roles), wordsArb(f, own), fc.boolean());
      const [role, words, toServer] = fc.sample(arb, { numRuns: 1, seed: seed + index })[0]!;
      const { pinned } = portsFor(mode, index, toServer);
      out.push({ mode: mode.name, argv: [...mode.prefix, ...role, ...pinned, ...(test ? ["--"] : []), ...words], port: own });
    }
  }
  return out;
}
