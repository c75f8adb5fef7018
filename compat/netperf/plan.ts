import { z } from "zod";
import { MigratedTest } from "../../interop/netperf/test-request.ts";

/** What `anyperf netperf ...` was asked to do, in netperf's own terms (its variables, its defaults). */

const pair = <T extends z.ZodTypeAny>(t: T) => z.object({ local: t, remote: t });

export const OutputMode = z.enum(["legacy", "csv", "human", "keyval"]);
export type OutputMode = z.infer<typeof OutputMode>;

export const NetperfPlan = z.object({
  /** Control connection. */
  host: z.string().min(1),
  controlPort: z.number().int().min(1).max(65535),
  /** Local control port (-p ,N); undefined = any. */
  localControlPort: z.number().int().min(0).max(65535).optional(),
  localControlHost: z.string().optional(),
  family: z.enum(["any", "ipv4", "ipv6"]),
  test: MigratedTest,
  /** -t omni: the test is named by -d/-T/-c, and its default output is the -O table. */
  omni: z.boolean(),
  /** netperf's test name as typed, upper-cased (for COMMAND_LINE etc. the raw argv is kept separately). */
  testName: z.string(),
  /** > 0 seconds; < 0 = -(transactions or bytes); 0 = until interrupted. */
  testLength: z.number().int(),
  localCpu: z.boolean(),
  localCpuRate: z.number(),
  remoteCpu: z.boolean(),
  remoteCpuRate: z.number(),
  /** -f letter; undefined = the test's default ('x' for RR, 'm' otherwise). */
  format: z.string().length(1).optional(),
  printHeaders: z.boolean(),
  verbosity: z.number().int(),
  brand: z.string().optional(),
  passphrase: z.string().max(647).optional(),
  /** -i max,min: rounds on one control connection. */
  iterationMax: z.number().int().min(1).max(30),
  iterationMin: z.number().int().min(1).max(30),
  confidenceLevel: z.number().int(),
  /** -I ,width as a fraction (5 % = 0.05); 0 without -i/-I. */
  confidenceInterval: z.number(),
  /** Global -r: confidence is reached on the result alone, whatever the CPU figures do. */
  resultConfidenceOnly: z.boolean(),
  /** Global -D: seconds between interim results (its sign and units guess do not change what we print). */
  demoIntervalS: z.number().positive().optional(),
  align: pair(z.object({ send: z.number().int(), recv: z.number().int() })),
  offset: pair(z.object({ send: z.number().int(), recv: z.number().int() })),
  cpuAffinity: pair(z.number().int()),
  socketPrio: pair(z.number().int()),
  socketTos: pair(z.number().int()),
  keepAlive: z.boolean(),
  fillFile: pair(z.string()),
  /** -W send,recv ring widths; 0 = derive. */
  sendWidth: z.number().int().min(0),
  recvWidth: z.number().int().min(0),
  /** -s: seconds to wait before the data phase. */
  waitSeconds: z.number().int().min(0),

  /** Test-specific options (after --). */
  localSendSize: z.number().int().min(0),
  remoteSendSize: z.number().int(),
  localRecvSize: z.number().int().min(0),
  remoteRecvSize: z.number().int(),
  requestSize: z.number().int(),
  responseSize: z.number().int(),
  socketBuffers: pair(z.object({ send: z.number().int(), recv: z.number().int() })),
  noDelay: z.boolean(),
  cork: z.boolean(),
  /** TCP_MAXSEG's range (src/sockopt/constants.ts); -1 asks for none. */
  transportMss: z.union([z.literal(-1), z.number().int().min(88).max(65535)]),
  localDataPort: z.number().int().min(0).max(65535),
  remoteDataPort: z.number().int().min(0).max(65535),
  clientPortMin: z.number().int().min(0).max(65535),
  clientPortMax: z.number().int().min(0).max(65535),
  routingAllowed: z.boolean().optional(),
  dataFamily: z.enum(["any", "ipv4", "ipv6"]),
  remoteDataAddress: z.string().optional(),
  localDataAddress: z.string().optional(),
  congestion: pair(z.string()),
  firstBurst: z.number().int().min(0),
  /** -e: UDP_RR receive timeout in seconds (0 = none). */
  receiveTimeout: z.number().int().min(0),
  output: OutputMode,
  /** The -o/-O/-k list or file name; undefined = netperf's default list for the test. */
  outputSelection: z.string().optional(),
  uuid: z.string().optional(),
  useSendfile: z.boolean(),
  fastOpen: z.boolean(),
  pktinfo: z.boolean(),
  deferAccept: z.boolean(),
  /** Our extension: N independent tests in this process, each printed, then the aggregate. */
  instances: z.number().int().min(1).max(10000),
  /** The command line as netperf records it (COMMAND_LINE selector). */
  commandLine: z.string(),
});
export type NetperfPlan = z.infer<typeof NetperfPlan>;

export const NetserverPlan = z.object({
  port: z.number().int().min(0).max(65535),
  /** -L name: listen address; undefined = the wildcard of each family. */
  listenAddress: z.string().optional(),
  family: z.enum(["any", "ipv4", "ipv6"]),
  /** -D: stay in the foreground (we always do; netserver daemonises without it). */
  foreground: z.boolean(),
  /** -f: serve tests one at a time (netserver's no-fork mode). */
  serial: z.boolean(),
  passphrase: z.string().optional(),
  verbosity: z.number().int(),
  debug: z.number().int().min(0),
  /** Our limit on tests running at once; more control connections are refused with EBUSY. */
  maxTests: z.number().int().min(1),
});
export type NetserverPlan = z.infer<typeof NetserverPlan>;
