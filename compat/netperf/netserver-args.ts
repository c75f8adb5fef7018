import { UserError } from "../../src/errors.ts";
import { atoi, breakArgsExplicit, getopt } from "./getopt.ts";
import { NETPERF_VERSION } from "./netperf-args.ts";
import { NetserverPlan } from "./plan.ts";
import { POLICY_HELP } from "../../src/access/server-policy.ts";

/** netserver 2.7.0's command line ("DdfhL:n:Np:v:VZ:46"), plus our `--max-tests N`. */

export type NetserverCommand = { kind: "run"; plan: NetserverPlan } | { kind: "print"; text: string; exitCode: number };

export const DEFAULT_MAX_TESTS = 1024;

/** netserver 2.7.0's getopt string. */
export const NETSERVER_SPEC = "DdfhL:n:Np:v:VZ:46";

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
  const p = {
    port: 12865,
    listenAddress: undefined as string | undefined,
    family: "any" as "any" | "ipv4" | "ipv6",
    foreground: false,
    serial: false,
    passphrase: undefined as string | undefined,
    verbosity: 1,
    debug: 0,
    maxTests,
  };
  const out: { print?: { text: string; exitCode: number } } = {};
  getopt(argv, 0, NETSERVER_SPEC, "netserver", ({ letter, value = "" }) => {
    switch (letter) {
      case "h":
        out.print ??= { text: NETSERVER_USAGE, exitCode: 1 };
        return;
      case "V":
        out.print ??= { text: `Netperf version ${NETPERF_VERSION}\n`, exitCode: 0 };
        return;
      case "D":
        p.foreground = true;
        return;
      case "d":
        p.debug++;
        return;
      case "f":
        p.serial = true;
        return;
      case "L": {
        const [name, fam] = breakArgsExplicit(value);
        if (name) p.listenAddress = name;
        if (fam.includes("6")) p.family = "ipv6";
        else if (fam.includes("4") || fam.includes("inet")) p.family = "ipv4";
        return;
      }
      case "p": {
        const port = atoi(value);
        if (port < 0 || port > 65535 || !/^\s*\d/.test(value)) throw new UserError(`netserver: -p ${value} is not a port number (0..65535)`);
        p.port = port;
        return;
      }
      case "v":
        p.verbosity = atoi(value);
        return;
      case "Z":
        p.passphrase = value.slice(0, 647);
        return;
      case "4":
        p.family = "ipv4";
        return;
      case "6":
        p.family = "ipv6";
        return;
      default:
        // -n (Windows CPU count) and -N (no debug output) change nothing here.
        return;
    }
  });
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
