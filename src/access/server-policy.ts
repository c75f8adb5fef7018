import { z } from "zod";
import { UserError } from "../errors.ts";
import { optionError } from "../option-error.ts";
import { parseRate } from "../units.ts";
import { addressAllowed, parseCidrList } from "./cidr.ts";
import { Cidr } from "./cidr-schema.ts";

/**
 * What every server mode (iperf3 -s, iperf -s, netserver, ntttcp -r, the status endpoint) lets a peer do: who may
 * connect (--allow) and how big a test may be (--max-tests, --max-streams, --max-duration, --max-rate). The options
 * are global: main.ts takes them out of argv before a dialect parses it (like --http), so every mode spells them the
 * same; each server reads the result with `serverPolicy()` and says no at its own protocol point.
 */

export const ServerPolicy = z.object({
  /** Peers allowed to connect; undefined = anyone. */
  allow: z.array(Cidr).min(1).optional(),
  maxTests: z.int().min(1).max(65535).optional(),
  maxStreams: z.int().min(1).max(65535).optional(),
  maxDurationS: z.number().positive().max(86400 * 365).optional(),
  /** Total bits/s one test may ask for. */
  maxRateBps: z.number().positive().optional(),
});
export type ServerPolicy = z.infer<typeof ServerPolicy>;

/** The global spellings, as help texts and messages name them. */
export const POLICY_FLAGS = {
  allow: "--allow",
  maxTests: "--max-tests",
  maxStreams: "--max-streams",
  maxDurationS: "--max-duration",
  maxRateBps: "--max-rate",
} as const;

const BY_FLAG = new Map(Object.entries(POLICY_FLAGS).map(([k, f]) => [f as string, k as keyof ServerPolicy]));

/** One line per option, for each dialect's help text. */
export const POLICY_HELP = `Server limits and access (every anyperf server mode):
  --allow CIDR,...          serve only peers in these networks (e.g. 10.0.0.0/8,::1); others are closed at accept
  --max-tests N             tests served at once; more are refused
  --max-streams N           streams one test may open
  --max-duration SECONDS    longest test the server runs
  --max-rate RATE[KMG]      total bits/s one test may ask for (e.g. 1G)
`;

function positiveInt(flag: string, text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) throw new UserError(`${flag} needs a whole number above 0, got '${text}'`, 2);
  return Number(text);
}

function parseValue(key: keyof ServerPolicy, flag: string, text: string): unknown {
  switch (key) {
    case "allow":
      return parseCidrList(text, flag);
    case "maxTests":
    case "maxStreams":
      return positiveInt(flag, text);
    case "maxDurationS": {
      const v = Number(text);
      if (text.trim() === "" || !Number.isFinite(v) || v <= 0) throw new UserError(`${flag} needs a number of seconds above 0, got '${text}'`, 2);
      return v;
    }
    case "maxRateBps": {
      const r = parseRate(text, { option: flag, pps: false });
      if (!r.bitsPerSecond || r.bitsPerSecond <= 0) throw new UserError(`${flag} needs a rate above 0 (e.g. 1G), got '${text}'`, 2);
      return r.bitsPerSecond;
    }
  }
}

/** Takes the policy options (`--flag VALUE` or `--flag=VALUE`) out of argv; the rest goes to the mode. */
export function takeServerPolicyOptions(argv: readonly string[]): { rest: string[]; policy: ServerPolicy; given: string[] } {
  const rest: string[] = [];
  const raw: Record<string, unknown> = {};
  const given: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    const eq = a.indexOf("=");
    const flag = eq > 0 && a.startsWith("--") ? a.slice(0, eq) : a;
    const key = BY_FLAG.get(flag);
    if (key === undefined) {
      rest.push(a);
      continue;
    }
    const value = eq > 0 && a.startsWith("--") ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UserError(`${flag} needs a value: see --help`, 2);
    raw[key] = parseValue(key, flag, value);
    given.push(flag);
  }
  const parsed = ServerPolicy.safeParse(raw);
  if (!parsed.success) throw optionError(parsed.error, POLICY_FLAGS, { input: raw }) ?? parsed.error;
  return { rest, policy: parsed.data, given };
}

let current: ServerPolicy = {};

/** The policy of this process (main.ts sets it once; tests set their own). */
export function serverPolicy(): ServerPolicy {
  return current;
}

export function setServerPolicy(p: ServerPolicy): void {
  current = ServerPolicy.parse(p);
}

/** main.ts's hook: strips the options, refuses them on a client, and installs them. Returns the mode's argv. */
export function applyServerPolicyOptions(argv: readonly string[], isServer: boolean): string[] {
  const { rest, policy, given } = takeServerPolicyOptions(argv);
  if (given.length > 0 && !isServer) {
    throw new UserError(`${given[0]} is a server option: use it with -s (iperf3, iperf), netserver or ntttcp -r, or drop it`, 2);
  }
  setServerPolicy(policy);
  return rest;
}

/**
 * The policy as command-line options again, for a server that re-runs itself detached (netserver without -D,
 * iperf -D): main.ts took them out of the argv the dialect sees.
 */
export function serverPolicyArgs(p: ServerPolicy = current): string[] {
  const out: string[] = [];
  if (p.allow) out.push(POLICY_FLAGS.allow, p.allow.map((c) => c.text).join(","));
  if (p.maxTests !== undefined) out.push(POLICY_FLAGS.maxTests, String(p.maxTests));
  if (p.maxStreams !== undefined) out.push(POLICY_FLAGS.maxStreams, String(p.maxStreams));
  if (p.maxDurationS !== undefined) out.push(POLICY_FLAGS.maxDurationS, String(p.maxDurationS));
  if (p.maxRateBps !== undefined) out.push(POLICY_FLAGS.maxRateBps, String(p.maxRateBps));
  return out;
}

/** A limit in force and the flag that set it (a dialect's own spelling, e.g. --server-bitrate-limit, wins if given). */
export interface Limit {
  value: number;
  flag: string;
}

/** The tighter of the global limit and a dialect's own (0 or undefined = not set). */
export function tighter(global: number | undefined, globalFlag: string, native: number | undefined, nativeFlag: string): Limit | undefined {
  const g = global !== undefined && global > 0 ? { value: global, flag: globalFlag } : undefined;
  const n = native !== undefined && native > 0 ? { value: native, flag: nativeFlag } : undefined;
  if (!g) return n;
  if (!n) return g;
  return n.value < g.value ? n : g;
}

/** The limits a server checks a test against, each with the flag its refusal names. */
export interface TestLimits {
  maxTests?: Limit;
  maxStreams?: Limit;
  maxDurationS?: Limit;
  maxRateBps?: Limit;
}

/** The global policy's limits (for modes with no native spelling). */
export function policyLimits(p: ServerPolicy = current): TestLimits {
  const l = (v: number | undefined, flag: string) => (v === undefined ? undefined : { value: v, flag });
  return {
    maxTests: l(p.maxTests, POLICY_FLAGS.maxTests),
    maxStreams: l(p.maxStreams, POLICY_FLAGS.maxStreams),
    maxDurationS: l(p.maxDurationS, POLICY_FLAGS.maxDurationS),
    maxRateBps: l(p.maxRateBps, POLICY_FLAGS.maxRateBps),
  };
}

export type LimitName = "streams" | "duration" | "rate";

export interface Refusal {
  limit: LimitName;
  message: string;
}

function rateText(bps: number): string {
  for (const [d, u] of [[1e9, "Gbit/s"], [1e6, "Mbit/s"], [1e3, "kbit/s"]] as const) {
    if (bps >= d) return `${Number((bps / d).toFixed(2))} ${u}`;
  }
  return `${bps} bit/s`;
}

/**
 * Checks what a test asks for: `streams` it will open, `durationS` it asks to run (undefined = not checked, Infinity
 * = no bound: by bytes or until the client stops), `rateBps` total it asks to send (0/undefined = unlimited, only measurable later). The message
 * names the request, the limit and the flag.
 */
export function checkTest(limits: TestLimits, ask: { streams?: number; durationS?: number; rateBps?: number }): Refusal | undefined {
  const { maxStreams, maxDurationS, maxRateBps } = limits;
  if (maxStreams && ask.streams !== undefined && ask.streams > maxStreams.value) {
    return { limit: "streams", message: `test asks for ${ask.streams} streams; this server allows ${maxStreams.value} (${maxStreams.flag})` };
  }
  if (maxDurationS && ask.durationS !== undefined && ask.durationS > maxDurationS.value) {
    const asked = ask.durationS === Infinity ? "no time bound" : `${ask.durationS} s`;
    return { limit: "duration", message: `test asks for ${asked}; this server allows ${maxDurationS.value} s (${maxDurationS.flag})` };
  }
  if (maxRateBps && ask.rateBps !== undefined && ask.rateBps > maxRateBps.value) {
    return { limit: "rate", message: `test asks for ${rateText(ask.rateBps)}; this server allows ${rateText(maxRateBps.value)} (${maxRateBps.flag})` };
  }
  return undefined;
}

/** The measured rate of a running test over the limit (a test that asked for no rate, e.g. unlimited TCP). */
export function rateExceeded(limit: Limit, measuredBps: number, windowS: number): string {
  return `test ran at ${rateText(measuredBps)} over ${windowS} s; this server allows ${rateText(limit.value)} (${limit.flag})`;
}

/** The message for one test too many. */
export function busyMessage(limit: Limit, running: number): string {
  return `${running} tests running; this server allows ${limit.value} at once (${limit.flag})`;
}

/** True when the policy lets this peer in (no --allow = everyone). */
export function peerAllowed(address: string | undefined, p: ServerPolicy = current): boolean {
  if (!p.allow) return true;
  return address !== undefined && addressAllowed(p.allow, address);
}
