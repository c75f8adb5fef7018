import { UserError } from "../../src/errors.ts";
import type { MigratedTest } from "../../interop/netperf/test-request.ts";
import { atoi, breakArgs, breakArgsExplicit, convert, portNumber, setHalves } from "./getopt.ts";
import { acceptedWithoutEffect, addressFamily, getoptSpec, type OptionContext, type OptionTable } from "./option-table.ts";
import type { OutputMode } from "./plan.ts";
import { selectorListing } from "./selectors.ts";

/**
 * netperf 2.7.0's test-specific options (after `--`, docs/protocols/netperf.md §12) as one table for every test
 * anyperf runs: `-t omni`, the migrated tests (TCP_STREAM ... UDP_RR, UUID) and the classic ones (TCP_MSS, TCP_CC,
 * TCP_SENDFILE). An entry that names its test kinds changes nothing for the others (netperf reads -d only for an
 * actual omni test).
 */

export type TestKind = "omni" | "migrated" | "classic";

/** netperf's TCP_CRR local port range when -p is not given. */
export const CRR_PORTS = { min: 5000, max: 65535 };

/** netperf's NETPERF_XMIT / NETPERF_RECV direction bits (netsh.h), from netperf's own view. */
export const XMIT = 0x2;
export const RECV = 0x4;

/** The test options' state: plan fields, and what names an omni test (`direction` undefined until -d names one). */
export function testOptionDefaults(sendWidth: number) {
  return {
    localSendSize: 0,
    remoteSendSize: -1,
    localRecvSize: 0,
    remoteRecvSize: -1,
    requestSize: -1,
    responseSize: -1,
    socketBuffers: { local: { send: -1, recv: -1 }, remote: { send: -1, recv: -1 } },
    noDelay: false,
    /** -C: TCP_CORK on our data socket (netperf sets it on its own side only). */
    cork: false,
    /** -G: TCP_MAXSEG on our data socket before it connects (-1: none). */
    transportMss: -1,
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
    /** Test -W sets the global -W's send half. */
    sendWidth,
    /** omni's direction bits: -d sets them, else -m, -M and -r add theirs (scan_omni_args' implicit_direction). */
    direction: 0,
    implicitDirection: true,
    /** -T's transport; omni runs tcp when none is given, a migrated test its own; `other` is a name netperf reads as IP's default. */
    protocol: undefined as "tcp" | "udp" | { other: string } | undefined,
    connect: false,
  };
}
export type TestOptionState = ReturnType<typeof testOptionDefaults>;

/** A size option's direction, added while no -d has named one. */
function implies(s: TestOptionState, bits: number): void {
  if (s.implicitDirection) s.direction |= bits;
}

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
export function omniTest(direction: number, protocol: "tcp" | "udp", connect: boolean): MigratedTest | undefined {
  const sends = (direction & XMIT) !== 0;
  const receives = (direction & RECV) !== 0;
  // NETPERF_IS_RR: both bits, or neither.
  const rr = sends === receives;
  if (protocol === "udp") return connect ? undefined : rr ? "UDP_RR" : sends ? "UDP_STREAM" : undefined;
  if (rr) return connect ? "TCP_CRR" : "TCP_RR";
  if (connect) return undefined;
  return sends ? "TCP_STREAM" : "TCP_MAERTS";
}

/**
 * -o/-O/-k: the output mode, and an optional selector list taken only when the next word does not start with '-';
 * a list of `?` prints the selectors instead of running.
 */
function outputOption(mode: OutputMode) {
  return (s: TestOptionState, c: OptionContext) => {
    s.output = mode;
    s.outputSelection = undefined;
    const next = c.peek();
    if (next === undefined || next.startsWith("-")) return;
    c.consume();
    if (next === "?") c.printOnce(selectorListing(mode !== "human"), 1, true);
    else s.outputSelection = next;
  };
}

/** -H/-L: a data address without its /prefix, and a family from the second part. */
function dataAddress(field: "remoteDataAddress" | "localDataAddress") {
  return (s: TestOptionState, c: OptionContext) => {
    const [addr, fam] = breakArgsExplicit(c.value);
    if (addr) s[field] = breakArgsExplicit(addr, "/")[0] || undefined;
    if (fam) s.dataFamily = addressFamily(fam);
  };
}

/**
 * The letters of netperf's OMNI_ARGS that its SOCKETS_ARGS lacks: TCP_MSS, TCP_CC and TCP_SENDFILE read their test
 * options with scan_sockets_args, whose getopt rejects these.
 */
const OMNI_ARGS_ONLY = { accepted: ["omni", "migrated"] as TestKind[] };
/** An entry of scan_sockets_args where it reads a letter otherwise than scan_omni_args. */
const SOCKETS_ARGS = { accepted: ["classic"] as TestKind[] };

const flag = (letters: string, apply: (s: TestOptionState) => void, only?: typeof OMNI_ARGS_ONLY) => ({ letters, takesValue: false, apply, ...only });

export const TEST_OPTIONS: OptionTable<TestOptionState, TestKind> = [
  flag("4", (s) => void (s.dataFamily = "ipv4")),
  flag("6", (s) => void (s.dataFamily = "ipv6")),
  { ...OMNI_ARGS_ONLY, letters: "h", takesValue: false, apply: (_, c) => c.printOnce(OMNI_USAGE, 1, true) },
  { ...SOCKETS_ARGS, letters: "h", takesValue: false, apply: (_, c) => c.printOnce(SOCKETS_USAGE, 1, true) },
  flag("a", (s) => void (s.deferAccept = true), OMNI_ARGS_ONLY),
  flag("B", (s) => void (s.pktinfo = true), OMNI_ARGS_ONLY),
  flag("c", (s) => void (s.connect = true), OMNI_ARGS_ONLY),
  flag("C", (s) => void (s.cork = true)),
  flag("D", (s) => void (s.noDelay = true)),
  flag("F", (s) => void (s.fastOpen = true), OMNI_ARGS_ONLY),
  { ...OMNI_ARGS_ONLY, letters: "k", takesValue: false, apply: outputOption("keyval") },
  { ...OMNI_ARGS_ONLY, letters: "o", takesValue: false, apply: outputOption("csv") },
  { ...OMNI_ARGS_ONLY, letters: "O", takesValue: false, apply: outputOption("human") },
  { letters: "b", takesValue: true, apply: (s, c) => void (s.firstBurst = Math.max(0, atoi(c.value))) },
  {
    ...OMNI_ARGS_ONLY,
    letters: "d",
    takesValue: true,
    tests: ["omni"],
    apply: (s, c) => {
      s.direction = parseDirection(c.value);
      s.implicitDirection = false;
    },
  },
  { ...OMNI_ARGS_ONLY, letters: "e", takesValue: true, apply: (s, c) => void (s.receiveTimeout = Math.max(0, atoi(c.value))) },
  { ...OMNI_ARGS_ONLY, letters: "G", takesValue: true, apply: (s, c) => void (s.transportMss = atoi(c.value)) },
  { letters: "H", takesValue: true, apply: dataAddress("remoteDataAddress") },
  { letters: "L", takesValue: true, apply: dataAddress("localDataAddress") },
  {
    ...OMNI_ARGS_ONLY,
    letters: "K",
    takesValue: true,
    apply: (s, c) => {
      const [l, r] = breakArgs(c.value);
      if (l) s.congestion.local = l.slice(0, 15);
      // netperf 2.7.0 tests the third character of the remote name (a bug we keep): shorter names are ignored.
      if (r.length >= 3) s.congestion.remote = r.slice(0, 15);
    },
  },
  // -m local,remote and -M remote,local: a lone value sets only the first; a local size below 0 means netperf's default.
  // Each size given names a direction of an omni test without -d: we send (-m local, -M remote) or receive.
  {
    ...OMNI_ARGS_ONLY,
    letters: "m",
    takesValue: true,
    apply: (s, c) => {
      const [local, remote] = breakArgsExplicit(c.value);
      if (local) ((s.localSendSize = Math.max(0, convert(local))), implies(s, XMIT));
      if (remote) ((s.remoteSendSize = convert(remote)), implies(s, RECV));
    },
  },
  {
    ...OMNI_ARGS_ONLY,
    letters: "M",
    takesValue: true,
    apply: (s, c) => {
      const [remote, local] = breakArgsExplicit(c.value);
      if (remote) ((s.remoteRecvSize = convert(remote)), implies(s, XMIT));
      if (local) ((s.localRecvSize = Math.max(0, convert(local))), implies(s, RECV));
    },
  },
  // scan_sockets_args converts the whole word, commas and all: -m is the send size, -M the size netserver receives.
  { ...SOCKETS_ARGS, letters: "m", takesValue: true, apply: (s, c) => void (s.localSendSize = Math.max(0, convert(c.value))) },
  { ...SOCKETS_ARGS, letters: "M", takesValue: true, apply: (s, c) => void (s.remoteRecvSize = convert(c.value)) },
  { letters: "p", takesValue: true, apply: (s, c) => setHalves(s, ["clientPortMin", "clientPortMax"], c.value, (v, i) => portNumber(v, ["-p min", "-p ,max"][i]!)) },
  { letters: "P", takesValue: true, apply: (s, c) => setHalves(s, ["localDataPort", "remoteDataPort"], c.value, (v, i) => portNumber(v, ["-P local", "-P ,remote"][i]!)) },
  {
    letters: "r",
    takesValue: true,
    apply: (s, c) => {
      setHalves(s, ["requestSize", "responseSize"], c.value, convert);
      implies(s, XMIT | RECV);
    },
  },
  { letters: "R", takesValue: true, apply: (s, c) => void (s.routingAllowed = atoi(c.value) !== 0) },
  { letters: "s", takesValue: true, apply: (s, c) => setHalves(s.socketBuffers.local, ["send", "recv"], c.value, convert) },
  { letters: "S", takesValue: true, apply: (s, c) => setHalves(s.socketBuffers.remote, ["send", "recv"], c.value, convert) },
  {
    ...OMNI_ARGS_ONLY,
    letters: "t",
    takesValue: true,
    apply: () => {
      throw new UserError(`netperf: test option -t is not supported by anyperf: name the test with the global -t`);
    },
  },
  {
    letters: "T",
    takesValue: true,
    tests: ["omni", "migrated"],
    apply: (s, c) => {
      const proto = c.value.slice(0, 9).toLowerCase();
      s.protocol = proto === "tcp" || proto === "udp" ? proto : { other: c.value };
    },
  },
  { ...OMNI_ARGS_ONLY, letters: "u", takesValue: true, apply: (s, c) => void (s.uuid = c.value.slice(0, 37)) },
  { letters: "W", takesValue: true, apply: (s, c) => void (s.sendWidth = Math.max(0, convert(c.value))) },
  // -g -i -I -j -l -n -N -U -V -w (and SOCKETS_ARGS' -z): accepted; they do not change the tests anyperf runs.
  ...acceptedWithoutEffect<TestOptionState, TestKind>("NnV", "w"),
  ...acceptedWithoutEffect<TestOptionState, TestKind>("gIU", "ijl").map((e) => ({ ...e, ...OMNI_ARGS_ONLY })),
  { letters: "z", takesValue: false, accepted: ["classic"], apply: () => undefined },
];

/** netperf 2.7.0's OMNI_ARGS, as the table stands for it. */
export const TEST_SPEC = getoptSpec(TEST_OPTIONS, "omni");

/** How netperf's usage texts explain break_args. */
export const PAIRS_NOTE = `For those options taking two parms, at least one must be specified;
specifying one value without a comma will set both parms to that
value, specifying a value with a leading comma will set just the second
parm, a value with a trailing comma will set just the first. To set
each parm to unique values, specify both and separate them with a
comma.
`;

/** netperf 2.7.0's omni_usage, printed by -h for omni and the tests migrated to it. */
const OMNI_USAGE = `
Usage: netperf [global options] -- [test options] 

OMNI and Migrated BSD Sockets Test Options:
    -b number         Send number requests at start of _RR tests
    -c                Explicitly declare this a connection test such as
                      TCP_CRR or TCP_CC
    -C                Set TCP_CORK when available
    -d direction      Explicitly set test direction based on bitwise OR
                      of 0x2 for transmit and 0x4 for receive. Default:
                      based on test type
    -D [L][,R]        Set TCP_NODELAY locally and/or remotely (TCP_*)
    -h                Display this text
    -H name[/mask],fam  Use name (or IP) and family as target of data connection
                      A mask value will cause randomization of the IP used
    -k [file]         Generate keyval output optionally based on file
                      Use filename of '?' to get the list of choices
    -K loc[,rem]      Set the local and/or remote congestion control
                      algorithm to use on those platforms where it can
                      be set.
    -L name[/mask],fam  Use name (or IP) and family as source of data connection
                      A mask value will cause randomization of the IP used
    -m local,remote   Set the send size for _STREAM/_MAERTS tests
    -M local,remote   Set the recv size for _STREAM/_MAERTS tests
    -n                Use the connected socket for UDP locally
    -N                Use the connected socket for UDP remotely
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
    -t type           Explicitly set socket type. Default is implicit
                      based on other settings
    -T protocol       Explicitly set data connection protocol. Default is
                      implicit based on other settings
    -u uuid           Use the supplied string as the UUID for this test.
    -4                Use AF_INET (eg IPv4) on both ends of the data conn
    -6                Use AF_INET6 (eg IPv6) on both ends of the data conn

${PAIRS_NOTE}`;

/** netperf 2.7.0's sockets_usage, printed by -h for TCP_MSS, TCP_CC and TCP_SENDFILE. */
const SOCKETS_USAGE = `
Usage: netperf [global options] -- [test options] 

TCP/UDP BSD Sockets Test Options:
    -b number         Send number requests at start of _RR tests
    -C                Set TCP_CORK when available
    -D [L][,R]        Set TCP_NODELAY locally and/or remotely (TCP_*)
    -h                Display this text
    -H name,fam       Use name (or IP) and family as target of data connection
    -L name,fam       Use name (or IP) and family as source of data connection
    -m bytes          Set the send size (TCP_STREAM, UDP_STREAM)
    -M bytes          Set the recv size (TCP_STREAM, UDP_STREAM)
    -n                Use the connected socket for UDP locally
    -N                Use the connected socket for UDP remotely
    -p min[,max]      Set the min/max port numbers for TCP_CRR, TCP_TRR
    -P local[,remote] Set the local/remote port for the data socket
    -r req,[rsp]      Set request/response sizes (TCP_RR, UDP_RR)
    -s send[,recv]    Set local socket send/recv buffer sizes
    -S send[,recv]    Set remote socket send/recv buffer sizes
    -4                Use AF_INET (eg IPv4) on both ends of the data conn
    -6                Use AF_INET6 (eg IPv6) on both ends of the data conn

${PAIRS_NOTE}`;
