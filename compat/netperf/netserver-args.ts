import { UserError } from "../../src/errors.ts";
import { atoi, breakArgsExplicit } from "./getopt.ts";
import { acceptedWithoutEffect, addressFamily, getoptSpec, parseWithTable, SHARED_OPTIONS, type OptionTable, type Printed } from "./option-table.ts";
import { NetserverPlan } from "./plan.ts";
import { POLICY_HELP } from "../../src/access/server-policy.ts";

/** netserver 2.7.0's command line ("DdfhL:n:Np:v:VZ:46"), plus our `--max-tests N`. */

export type NetserverCommand = { kind: "run"; plan: NetserverPlan } | ({ kind: "print" } & Printed);

export const DEFAULT_MAX_TESTS = 1024;

function serverDefaults() {
  return {
    port: 12865,
    listenAddress: undefined as string | undefined,
    family: "any" as "any" | "ipv4" | "ipv6",
    foreground: false,
    serial: false,
    passphrase: undefined as string | undefined,
    verbosity: 1,
    debug: 0,
  };
}
type ServerState = ReturnType<typeof serverDefaults>;

/** netserver 2.7.0's options; -4, -6, -V and -Z are netperf's own. */
const NETSERVER_OPTIONS: OptionTable<ServerState> = [
  ...SHARED_OPTIONS,
  { letters: "h", takesValue: false, apply: (_, c) => c.printOnce(NETSERVER_USAGE, 1) },
  { letters: "D", takesValue: false, apply: (p) => void (p.foreground = true) },
  { letters: "d", takesValue: false, apply: (p) => void p.debug++ },
  { letters: "f", takesValue: false, apply: (p) => void (p.serial = true) },
  {
    letters: "L",
    takesValue: true,
    apply: (p, c) => {
      const [name, fam] = breakArgsExplicit(c.value);
      if (name) p.listenAddress = name;
      // Unlike netperf's -L, a family netserver cannot read leaves the one already chosen.
      const f = addressFamily(fam);
      if (f !== "any") p.family = f;
    },
  },
  {
    letters: "p",
    takesValue: true,
    apply: (p, c) => {
      const port = atoi(c.value);
      if (port < 0 || port > 65535 || !/^\s*\d/.test(c.value)) throw new UserError(`netserver: -p ${c.value} is not a port number (0..65535)`);
      p.port = port;
    },
  },
  { letters: "v", takesValue: true, apply: (p, c) => void (p.verbosity = atoi(c.value)) },
  // -n (Windows CPU count) and -N (no debug output) change nothing here.
  ...acceptedWithoutEffect<ServerState>("N", "n"),
];

/** netserver 2.7.0's getopt string. */
export const NETSERVER_SPEC = getoptSpec(NETSERVER_OPTIONS);

export function parseNetserverArgs(argvIn: readonly string[]): NetserverCommand {
  const argv: string[] = [];
  let maxTests = DEFAULT_MAX_TESTS;
  for (let i = 0; i < argvIn.length; i++) {
    const w = argvIn[i]!;
    const v = w === "--max-tests" ? argvIn[++i] : w.startsWith("--max-tests=") ? w.slice(12) : undefined;
    if (v === undefined && w !== "--max-tests") {
      argv.push(w);
      continue;
    }
    if (v === undefined || !/^\d+$/.test(v) || Number(v) < 1) throw new UserError(`--max-tests needs a positive count, got '${v ?? ""}'`);
    maxTests = Number(v);
  }
  const p = { ...serverDefaults(), maxTests };
  const out: { print?: Printed } = {};
  parseWithTable(argv, 0, NETSERVER_OPTIONS, "netserver", p, out);
  if (out.print) return { kind: "print", ...out.print };
  return { kind: "run", plan: NetserverPlan.parse(p) };
}

export const NETSERVER_USAGE = `
Usage: netserver [options] 

Options:
    -h                Display this text
    -D                Do not daemonize
    -d                Increase debugging output
    -f                Do not spawn chilren for each test, run serially
    -L name,family    Use name to pick listen address and family for family
    -N                No debugging output, even if netperf asks
    -p portnum        Listen for connect requests on portnum.
    -4                Do IPv4
    -6                Do IPv6
    -v verbosity      Specify the verbosity level
    -V                Display version information and exit
    -Z passphrase     Expect passphrase as the first thing received
    --max-tests N     (anyperf) tests served at once; more are refused with EBUSY (default ${DEFAULT_MAX_TESTS})

${POLICY_HELP}  (netserver answers a test over a limit with an error netperf prints; the server logs the limit and
  its flag. Each netperf test is one stream; netperf asks for no rate, so --max-streams/--max-rate change nothing.
  --max-duration refuses a longer -l and ends -l -N count tests at the limit.)

`;
