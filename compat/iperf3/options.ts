/**
 * The iperf3 3.12 command line as getopt_long sees it: the option table, and a tokenizer that turns what getopt
 * accepts (unique long-option prefixes such as --bid for --bidir, short clusters such as -uR, attached values such
 * as -P4 and -l128K, --opt=value, optional arguments only after '=') into the `--long` / `--long=value` tokens
 * node:util's parseArgs reads.
 */
import { UserError } from "../../src/errors.ts";

export type ArgKind = "none" | "required" | "optional";
/** Who may use an option; iperf3 refuses client options on a server and vice versa. */
export type OptionRole = "both" | "client" | "server";

export interface OptionDef {
  short?: string;
  arg: ArgKind;
  role: OptionRole;
  /** getopt_long alias of another long option (e.g. --bandwidth for --bitrate). */
  aliasOf?: string;
}

/** 3.12's options (Linux build) plus ours: --json-stream (as in iperf3 3.17), --max-tests, --server-max-duration. */
export const OPTIONS: Record<string, OptionDef> = {
  port: { short: "p", arg: "required", role: "both" },
  format: { short: "f", arg: "required", role: "both" },
  interval: { short: "i", arg: "required", role: "both" },
  daemon: { short: "D", arg: "none", role: "server" },
  "one-off": { short: "1", arg: "none", role: "server" },
  verbose: { short: "V", arg: "none", role: "both" },
  json: { short: "J", arg: "none", role: "both" },
  "json-stream": { arg: "none", role: "both" },
  version: { short: "v", arg: "none", role: "both" },
  server: { short: "s", arg: "none", role: "both" },
  client: { short: "c", arg: "required", role: "both" },
  udp: { short: "u", arg: "none", role: "client" },
  bitrate: { short: "b", arg: "required", role: "client" },
  bandwidth: { arg: "required", role: "client", aliasOf: "bitrate" },
  "server-bitrate-limit": { arg: "required", role: "server" },
  time: { short: "t", arg: "required", role: "client" },
  bytes: { short: "n", arg: "required", role: "client" },
  blockcount: { short: "k", arg: "required", role: "client" },
  length: { short: "l", arg: "required", role: "client" },
  parallel: { short: "P", arg: "required", role: "client" },
  reverse: { short: "R", arg: "none", role: "client" },
  bidir: { arg: "none", role: "client" },
  window: { short: "w", arg: "required", role: "client" },
  bind: { short: "B", arg: "required", role: "both" },
  "bind-dev": { arg: "required", role: "both" },
  cport: { arg: "required", role: "both" },
  "set-mss": { short: "M", arg: "required", role: "client" },
  "no-delay": { short: "N", arg: "none", role: "client" },
  version4: { short: "4", arg: "none", role: "both" },
  version6: { short: "6", arg: "none", role: "both" },
  tos: { short: "S", arg: "required", role: "client" },
  dscp: { arg: "required", role: "client" },
  "extra-data": { arg: "required", role: "client" },
  flowlabel: { short: "L", arg: "required", role: "client" },
  zerocopy: { short: "Z", arg: "none", role: "client" },
  omit: { short: "O", arg: "required", role: "client" },
  file: { short: "F", arg: "required", role: "both" },
  sctp: { arg: "none", role: "both" },
  "repeating-payload": { arg: "none", role: "client" },
  timestamps: { arg: "optional", role: "both" },
  affinity: { short: "A", arg: "required", role: "both" },
  title: { short: "T", arg: "required", role: "client" },
  congestion: { short: "C", arg: "required", role: "client" },
  "linux-congestion": { arg: "required", role: "client", aliasOf: "congestion" },
  pidfile: { short: "I", arg: "required", role: "both" },
  logfile: { arg: "required", role: "both" },
  forceflush: { arg: "none", role: "both" },
  "get-server-output": { arg: "none", role: "client" },
  "udp-counters-64bit": { arg: "none", role: "both" },
  "no-fq-socket-pacing": { arg: "none", role: "client" },
  "dont-fragment": { arg: "none", role: "client" },
  "fq-rate": { arg: "required", role: "client" },
  "pacing-timer": { arg: "required", role: "client" },
  "connect-timeout": { arg: "required", role: "client" },
  "idle-timeout": { arg: "required", role: "server" },
  "rcv-timeout": { arg: "required", role: "both" },
  "snd-timeout": { arg: "required", role: "both" },
  debug: { short: "d", arg: "optional", role: "both" },
  help: { short: "h", arg: "none", role: "both" },
  "max-tests": { arg: "required", role: "server" },
  // 3.13-3.21 options: args.ts applies those anyperf runs (authentication, --cntl-ka, --server-max-duration) and
  // refuses the rest by name.
  "cntl-ka": { arg: "optional", role: "client" },
  "skip-rx-copy": { arg: "none", role: "client" },
  mptcp: { short: "m", arg: "none", role: "both" },
  gsro: { arg: "none", role: "client" },
  "json-stream-full-output": { arg: "none", role: "both" },
  "server-max-duration": { arg: "required", role: "server" },
  username: { arg: "required", role: "client" },
  "rsa-public-key-path": { arg: "required", role: "client" },
  "rsa-private-key-path": { arg: "required", role: "server" },
  "authorized-users-path": { arg: "required", role: "server" },
  "time-skew-threshold": { arg: "required", role: "server" },
  "use-pkcs1-padding": { arg: "none", role: "both" },
};

const BY_SHORT = new Map<string, string>(
  Object.entries(OPTIONS)
    .filter(([, d]) => d.short)
    .map(([name, d]) => [d.short!, name]),
);

/** The long name an option resolves to (aliases folded). */
export function canonical(name: string): string {
  return OPTIONS[name]?.aliasOf ?? name;
}

function lookupLong(given: string): string {
  if (OPTIONS[given]) return given;
  const matches = Object.keys(OPTIONS).filter((n) => n.startsWith(given));
  // Prefixes that only reach aliases of one option (e.g. --linux) are not ambiguous, as in getopt_long.
  const targets = new Set(matches.map(canonical));
  if (targets.size === 1) return matches[0]!;
  if (matches.length === 0) throw new UserError(`unrecognized option '--${given}': see --help for iperf3's options`, 1);
  throw new UserError(`option '--${given}' is ambiguous (${matches.map((m) => `--${m}`).join(", ")}): spell out more of it`, 1);
}

export interface Token {
  name: string;
  value?: string;
}

/**
 * getopt_long-style tokenizing of argv. Returns the options in order and the positional arguments (getopt
 * permutes, so options may follow them).
 */
export function tokenize(argv: readonly string[]): { tokens: Token[]; positionals: string[] } {
  const tokens: Token[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const given = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const name = lookupLong(given);
      const def = OPTIONS[name]!;
      if (def.arg === "none") {
        if (eq >= 0) throw new UserError(`option '--${name}' doesn't allow an argument: drop "=${a.slice(eq + 1)}"`, 1);
        tokens.push({ name: canonical(name) });
      } else if (eq >= 0) {
        tokens.push({ name: canonical(name), value: a.slice(eq + 1) });
      } else if (def.arg === "optional") {
        tokens.push({ name: canonical(name) });
      } else {
        if (i + 1 >= argv.length) throw new UserError(`option '--${name}' requires an argument`, 1);
        tokens.push({ name: canonical(name), value: argv[++i]! });
      }
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const ch = a[j]!;
        const name = BY_SHORT.get(ch);
        if (!name) throw new UserError(`invalid option -- '${ch}': see --help for iperf3's options`, 1);
        const def = OPTIONS[name]!;
        // -d takes no argument in 3.12's short form; its level only comes with --debug=N.
        if (def.arg === "none" || def.arg === "optional") {
          tokens.push({ name: canonical(name) });
          continue;
        }
        const rest = a.slice(j + 1);
        if (rest.length > 0) tokens.push({ name: canonical(name), value: rest });
        else if (i + 1 < argv.length) tokens.push({ name: canonical(name), value: argv[++i]! });
        else throw new UserError(`option requires an argument -- '${ch}'`, 1);
        break;
      }
      continue;
    }
    positionals.push(a);
  }
  return { tokens, positionals };
}

/** Tokens in the `--long` / `--long=value` form parseArgs reads. */
export function toParseArgsArgv(tokens: readonly Token[]): string[] {
  // parseArgs gives an optional argument a string type, which must carry a value: "" stands for none given.
  return tokens.map((t) => (t.value !== undefined ? `--${t.name}=${t.value}` : OPTIONS[t.name]?.arg === "optional" ? `--${t.name}=` : `--${t.name}`));
}
