import { UserError } from "../../src/errors.ts";
import { detectDialect, type Dialect } from "./detect.ts";
import { NO_ROLE, parseLinuxArgs } from "./linux-args.ts";
import type { LinuxOptions, ParseMessage } from "./linux-options.ts";
import type { WindowsOptions } from "./windows-options.ts";
import { planFromLinux, planFromWindows, type NtttcpPlan, type WindowsPlanOptions } from "./plan.ts";
import { parseWindowsArgs } from "./windows-args.ts";

/** argv (after `anyperf ntttcp`, or of a binary linked as ntttcp) → the plan, whichever dialect it is written in. */
export type ParsedCommand =
  | { kind: "help"; dialect: Dialect }
  | {
      kind: "run";
      dialect: Dialect;
      plan: NtttcpPlan;
      /** The dialect's own parsed options, for the outputs that echo them (flag dump, XML parameters). */
      linux?: LinuxOptions;
      windows?: WindowsOptions;
      messages: ParseMessage[];
      notes: string[];
      evidence: string[];
    };

export interface ParseEnv extends WindowsPlanOptions {
  cpus: number;
  argv0?: string;
}

export function parseCommand(argvIn: readonly string[], env: ParseEnv): ParsedCommand {
  try {
    return parse(argvIn, env);
  } catch (e) {
    if (e instanceof RangeError) throw new UserError(`${e.message}: pass a base port (-p) that keeps every port in range`);
    throw e;
  }
}

function parse(argvIn: readonly string[], env: ParseEnv): ParsedCommand {
  const exe = (env.argv0 ?? "ntttcp").toLowerCase().replace(/^.*[\\/]/, "").replace(/\.exe$/, "");
  // ntttcps/ntttcpr are Windows names; they only set the default role.
  const forced = exe === "ntttcps" || exe === "ntttcpr" ? ["--windows"] : [];
  const hasForce = argvIn.includes("--windows") || argvIn.includes("--linux");
  const { dialect, argv, evidence } = detectDialect(hasForce ? argvIn : [...forced, ...argvIn]);
  const help = argv.some((w) => w === "-h" || w === "--help" || (dialect === "windows" && /^[-/]\?$/.test(w)));
  if (dialect === "windows") {
    if (help || argv.length === 0) return { kind: "help", dialect };
    const o = parseWindowsArgs(argv, env.argv0);
    const plan = planFromWindows(o, env);
    return { kind: "run", dialect, plan, windows: o, messages: [], notes: o.notes, evidence };
  }
  // --help is -h, at the place it stands (getopt order: an error before it still wins, as with -h).
  const r = parseLinuxArgs(argv.map((w) => (w === "--help" ? "-h" : w)), env);
  if (r.kind === "help") return { kind: "help", dialect };
  const notes: string[] = [];
  // The real tool's INFO line says only "use receiver role": a user who typed `ntttcp -V` learns here that a receiver
  // now listens on every address of this host.
  if (r.messages.some((m) => m.text === NO_ROLE) && (r.options.address === "0.0.0.0" || r.options.address === "::")) {
    notes.push(`no role given (-r or -s): receiving on every address of this host (${r.options.address}); pass -r ADDRESS to bind one, or -s HOST to send`);
  }
  // Say so when a Windows-looking word was taken the Linux way (docs/protocols/ntttcp-interop.md §2).
  for (const w of argv) {
    if (w === "-ns") notes.push("-ns was read the ntttcp-for-linux way, as -n s (threads per port 's' → 1; sync stays on); pass --windows for Windows' no-sync");
    if (w === "-xml") notes.push("-xml was read the ntttcp-for-linux way, as -x ml (XML to a file named 'ml'); pass --windows for Windows' -xml");
  }
  return { kind: "run", dialect, plan: planFromLinux(r.options, env), linux: r.options, messages: r.messages, notes, evidence };
}
