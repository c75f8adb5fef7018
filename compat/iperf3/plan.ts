/**
 * What an `anyperf iperf3 ...` command line asks for, after the dialect's defaults and limits
 * (docs/protocols/iperf3.md §1) are applied.
 */
import { z } from "zod";
import { Defaults, Limits } from "../../interop/iperf3/constants.ts";
import { TestParams } from "../../interop/iperf3/params.ts";
import { AuthPadding } from "../../interop/iperf3/auth.ts";

export const Family = z.enum(["any", "ipv4", "ipv6"]);
export type Family = z.infer<typeof Family>;

export const OutputPlan = z.object({
  /** -f letter for rates: k m g t (bits), K M G T (bytes); "a" = adaptive bits, iperf3's default. */
  format: z.string().length(1).default("a"),
  /** Seconds between interval reports; 0 = none. */
  intervalS: z.number().min(0).max(Limits.maxIntervalS).default(Defaults.intervalS),
  json: z.boolean().default(false),
  /** One JSON object per line and event (iperf3 3.17's --json-stream). */
  jsonStream: z.boolean().default(false),
  verbose: z.boolean().default(false),
  debug: z.boolean().default(false),
  forceflush: z.boolean().default(false),
  logfile: z.string().optional(),
  /** strftime-style prefix for every line (--timestamps); undefined = off. */
  timestamps: z.string().optional(),
});
export type OutputPlan = z.infer<typeof OutputPlan>;

const common = {
  port: z.int().min(1).max(65535).default(Defaults.port),
  bind: z.string().min(1).optional(),
  family: Family.default("any"),
  output: OutputPlan.default(OutputPlan.parse({})),
  pidfile: z.string().optional(),
  /** TCP_USER_TIMEOUT for control and data sockets (ms). */
  sndTimeoutMs: z.int().min(0).optional(),
  /** No data for this long while receiving: abort the test (ms). */
  rcvTimeoutMs: z.int().min(Limits.minRcvTimeoutMs).default(Defaults.rcvTimeoutMs),
  /** -A n: this side's CPU (its main thread and data streams); a client's ",m" travels in TestParams.serverAffinity. */
  affinity: z.int().min(0).optional(),
};

export const ServerPlan = z.object({
  role: z.literal("server"),
  ...common,
  oneOff: z.boolean().default(false),
  daemon: z.boolean().default(false),
  /** Restart (here: exit with -1, else just note) after this many idle seconds; 0 = never. */
  idleTimeoutS: z.int().min(0).max(Limits.maxTimeS).default(0),
  /** Total bit/s a test may use (--server-bitrate-limit); 0 = none. */
  bitrateLimit: z.number().nonnegative().default(0),
  bitrateLimitIntervalS: z.number().nonnegative().default(5),
  /** Longest test this server runs, omit excluded; 0 = the client decides (plus the stock safety timer). */
  maxDurationS: z.int().min(0).max(Limits.maxTimeS).default(0),
  /** Tests served at once; beyond it new clients get ACCESS_DENIED like a busy stock server. */
  maxTests: z.int().min(1).max(1024).default(8),
  /** --rsa-private-key-path with --authorized-users-path: every test must carry credentials the file admits. */
  auth: z
    .object({
      privateKeyPem: z.string().min(1),
      usersPath: z.string().min(1),
      skewS: z.int().min(1),
      padding: AuthPadding,
    })
    .optional(),
});
export type ServerPlan = z.infer<typeof ServerPlan>;

export const ClientPlan = z.object({
  role: z.literal("client"),
  ...common,
  host: z.string().min(1),
  /** Local port for the data streams (--cport); stream i uses cport + i. */
  cport: z.int().min(1).max(65535).optional(),
  connectTimeoutMs: z.int().min(0).optional(),
  /** --cntl-ka[=idle/interval/count]: keepalive on the control connection; absent parts keep the kernel's values. */
  cntlKa: z.object({ idleS: z.int().min(1).optional(), intervalS: z.int().min(1).optional(), count: z.int().min(1).optional() }).optional(),
  params: TestParams,
  /** UDP without -l: the block size follows the control connection's MSS, as in 3.12. */
  udpLenFromMss: z.boolean().default(false),
  /** --username with --rsa-public-key-path; the password comes from IPERF3_PASSWORD. */
  auth: z.object({ username: z.string().min(1), password: z.string(), publicKeyPem: z.string().min(1), padding: AuthPadding }).optional(),
});
export type ClientPlan = z.infer<typeof ClientPlan>;
export type ClientPlanInput = z.input<typeof ClientPlan>;

export const Iperf3Plan = z.discriminatedUnion("role", [ServerPlan, ClientPlan]);
export type Iperf3Plan = z.infer<typeof Iperf3Plan>;
