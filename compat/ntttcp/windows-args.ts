import { UserError } from "../../src/errors.ts";
import { MAX_IO_BYTES } from "../../src/stream-spec.ts";
import { atoi, windowsSize } from "./c-numbers.ts";
import { WINDOWS_DEFAULTS, WINDOWS_EXIT_PARAMS, WindowsOptions, type WindowsMapping } from "./windows-options.ts";

/**
 * NTttcp for Windows 5.40 command line (docs/protocols/ntttcp-windows.md §1): separate words only, matched
 * case-insensitively, `-m` followed by any number of `threads,cpu,host` words. Options that steer Windows-only
 * machinery (NUMA, DPC, overlapped I/O, Hyper-V sockets, EStats…) are accepted and listed in `ignored` with the reason,
 * never misread.
 */

type Handler = (next: () => string | undefined, peek: () => string | undefined) => void;

const IGNORED_REASON: Record<string, string> = {
  "-a": "overlapped I/O is a Windows API; this build uses its own socket loop",
  "-w": "WSASend/WSARecv are Windows APIs",
  "-x": "TransmitPackets is a Windows API",
  "-icp": "I/O completion ports are a Windows API",
  "-uc": "unconnected UDP makes no difference to the bytes on the wire",
  "-uso": "UDP segmentation offload size is a Windows socket option",
  "-uro": "UDP receive coalescing is a Windows socket option",
  "-rt": "round-trip mode is not offered in the ntttcp dialect (use anyperf's request/response modes)",
  "-wa": "MSG_WAITALL does not change what is measured here",
  "-hv": "Hyper-V sockets (AF_HYPERV) exist only on Windows",
  "-na": "NUMA-node affinity is a Windows processor-group API",
  "-nsb": "output is already unbuffered",
  "-brn": "CPU burn between I/Os is not offered",
  "-lm": "per-I/O latency measurement is not offered in the ntttcp dialect",
  "-cfi": "idle-cycle counters are a Windows API; CPU comes from /proc here",
  "-es": "TCP EStats are a Windows API",
  "-sam": "sampling into several result blocks is not offered",
  "-qos": "qWave traffic types are a Windows API",
  "-jm": "jitter measurement (packet header) is not offered",
  "-ps": "packet spacing is not offered",
  "-d": "payload verification is not offered; the payload we send is 'A' (0x41) as Windows -d expects",
  "-sp": "-sp port assignment is not implemented; ports are base+i as without -sp (a Windows -sp peer will not match)",
  "-to": "internal wait timeouts are fixed here",
};

export function parseWindowsArgs(argv: readonly string[], argv0 = "ntttcp"): WindowsOptions {
  if (argv.length < 2) throw new UserError("NTttcp needs at least two arguments: e.g. -r -m 1,*,<address>", WINDOWS_EXIT_PARAMS);
  const exe = argv0.toLowerCase().replace(/^.*[\\/]/, "").replace(/\.exe$/, "");
  let role: "sender" | "receiver" = exe === "ntttcps" ? "sender" : "receiver";
  let mappings: WindowsMapping[] | undefined;
  let bufferLen: number | undefined;
  let sawL = false;
  let buffers: number | null = null;
  let runTime: number | null = null;
  let countTimeoutMs: number = WINDOWS_DEFAULTS.countTimeoutMs;
  let warmup = 0;
  let cooldown = 0;
  let basePort: number = WINDOWS_DEFAULTS.basePort;
  let syncPorts = false;
  let noSync = false;
  let timeoutMs: number = WINDOWS_DEFAULTS.timeoutMs;
  let asyncBuffers: number | null = null;
  let recvBuffer = -1;
  let sendBuffer = -1;
  let sawSb = false;
  let noDelay = false;
  let udp = false;
  let ipv6 = false;
  let nic: string | undefined;
  let xmlFile: string | undefined;
  let verbose = false;
  let hidePerThread = false;
  let throttleKBps = 0;
  let verify = false;
  let maxActiveThreads = -1;
  const flags = new Set<string>();
  const ignored: { option: string; reason: string }[] = [];
  const notes: string[] = [];

  const bad = (msg: string): never => {
    throw new UserError(`${msg} (NTttcp options are separate words, e.g. -t 60; run 'ntttcp -h' for the list)`, WINDOWS_EXIT_PARAMS);
  };
  const positive = (name: string, w: string | undefined): number => {
    const v = w === undefined ? 0 : atoi(w);
    if (v <= 0) bad(`${name} needs a number above 0`);
    return v;
  };

  const handlers: Record<string, Handler> = {
    "-s": () => void (role = "sender"),
    "-r": () => void (role = "receiver"),
    "-m": (next, peek) => {
      if (mappings) notes.push("Option: -m <mapping> is duplicated");
      const list: WindowsMapping[] = [];
      for (let w = peek(); w !== undefined && !w.startsWith("-"); w = peek()) {
        next();
        const f = w.split(",");
        if (f.length !== 3) bad(`mapping '${w}' must be threads,processor,host`);
        const threads = atoi(f[0]!);
        if (threads < 1) bad(`mapping '${w}': thread count must be above 0`);
        const cpu = f[1] === "*" ? null : atoi(f[1]!);
        if (cpu !== null && (cpu < 0 || !/^\d+$/.test(f[1]!))) bad(`mapping '${w}': processor must be * or a number`);
        list.push({ threads, cpu, host: f[2]! });
      }
      if (list.length === 0) bad("-m needs at least one mapping threads,processor,host");
      mappings = list;
    },
    "-l": (next) => {
      bufferLen = windowsSize(next() ?? "");
      if (bufferLen <= 0) bad("-l needs a buffer length above 0");
      if (bufferLen > MAX_IO_BYTES) bad(`-l ${bufferLen} is above ${MAX_IO_BYTES} bytes, anyperf's largest read or write: pass -l 64M or less`);
      sawL = true;
    },
    "-n": (next) => {
      buffers = windowsSize(next() ?? "");
      if (buffers <= 0) bad("-n needs a buffer count above 0");
      if (runTime !== null) {
        countTimeoutMs = runTime * 1000;
        runTime = null;
      }
    },
    "-t": (next) => {
      const t = positive("-t", next());
      if (buffers !== null) countTimeoutMs = t * 1000;
      else runTime = t;
    },
    "-wu": (next) => void (warmup = atoi(next() ?? "")),
    "-cd": (next) => void (cooldown = atoi(next() ?? "")),
    "-p": (next) => void (basePort = positive("-p", next())),
    "-sp": () => void (syncPorts = true),
    "-ns": () => void (noSync = true),
    "-to": (next) => void (timeoutMs = atoi(next() ?? "")),
    "-a": (next, peek) => {
      const w = peek();
      asyncBuffers = w !== undefined && /^\d+$/.test(w) ? atoi(next()!) : 2;
      if (w !== undefined && /^\d+$/.test(w) && !sawSb) sendBuffer = 0;
    },
    "-rb": (next) => void (recvBuffer = windowsSize(next() ?? "")),
    "-sb": (next) => {
      sendBuffer = windowsSize(next() ?? "");
      sawSb = true;
    },
    "-ndl": () => void (noDelay = true),
    "-u": () => {
      udp = true;
      if (!sawL) bufferLen = WINDOWS_DEFAULTS.udpBufferLen;
    },
    "-uc": () => {},
    "-uso": (next) => void next(),
    "-uro": () => {},
    "-w": () => {},
    "-x": (next, peek) => {
      const w = peek();
      if (w !== undefined && /^\d+$/.test(w)) next();
    },
    "-rt": () => {},
    "-d": () => void (verify = true),
    "-wa": () => {},
    "-6": () => void (ipv6 = true),
    "-hv": () => {},
    "-nic": (next) => void (nic = next()),
    "-na": (next) => void next(),
    "-xml": (next, peek) => {
      const w = peek();
      xmlFile = w !== undefined && !w.startsWith("-") ? next()! : WINDOWS_DEFAULTS.xmlFile;
    },
    "-v": () => void (verbose = true),
    "-hpt": () => void (hidePerThread = true),
    "-nsb": () => {},
    "-thr": (next) => void (throttleKBps = Math.max(0, atoi(next() ?? ""))),
    "-brn": (next) => void next(),
    "-lm": () => {},
    "-icp": (next) => void (maxActiveThreads = atoi(next() ?? "")),
    "-cfi": () => {},
    "-es": () => {},
    "-sam": (next) => {
      next();
      if (runTime === null) bad("-sam needs -t before it");
    },
    "-qos": (next) => void next(),
    "-jm": (next, peek) => {
      const w = peek();
      if (w !== undefined && !w.startsWith("-")) next();
    },
    "-ps": (next) => void next(),
  };

  let i = 0;
  const next = () => argv[i++];
  const peek = () => argv[i];
  while (i < argv.length) {
    const word = argv[i++]!;
    const key = word.toLowerCase();
    const h = handlers[key];
    if (!h) bad(`Unknown option(s): ${word}`);
    flags.add(key);
    h!(next, peek);
    const reason = IGNORED_REASON[key];
    if (reason && !ignored.some((x) => x.option === key)) ignored.push({ option: key, reason });
  }

  // VerifyArgs (docs/protocols/ntttcp-windows.md §1.3): the checks that decide whether the real tool would run at all.
  if (!mappings) bad("-m <threads,processor,host> is mandatory");
  const threads = mappings!.reduce((n, m) => n + m.threads, 0);
  if (flags.has("-w") && asyncBuffers === null) bad("-w needs -a");
  if (flags.has("-x") && (asyncBuffers === null || role !== "sender" || flags.has("-w"))) bad("-x needs -a and -s, and not -w");
  if (nic !== undefined && role !== "sender") bad("-nic is for the sender only");
  if (throttleKBps > 0 && role !== "sender") bad("-thr is for the sender only");
  if (!noSync && threads >= 1000) bad("without -ns the total thread count must be below 1000 (token ports are data port + 1000)");
  if (flags.has("-es") && udp) bad("-es cannot be used with -u");
  if (flags.has("-uso") && !(role === "sender" && udp)) bad("-uso needs -s and -u");
  if (flags.has("-uro") && !(role === "receiver" && udp)) bad("-uro needs -r and -u");
  if (flags.has("-uc") && (!udp || asyncBuffers !== null)) bad("-uc needs -u and cannot be used with -a");
  if (flags.has("-rt") && asyncBuffers !== null) bad("-rt cannot be used with -a");
  if (asyncBuffers !== null && asyncBuffers >= 64 && !flags.has("-icp")) bad("-a n needs n below 64 unless -icp is given");
  const len = bufferLen ?? (udp ? WINDOWS_DEFAULTS.udpBufferLen : WINDOWS_DEFAULTS.tcpBufferLen);
  if (flags.has("-jm") && len < 20) bad("-jm needs -l of at least 20");
  if (buffers !== null || runTime === null) {
    // Count mode: warm-up and cool-down do not apply (docs/protocols/ntttcp-windows.md §1.4).
    warmup = 0;
    cooldown = 0;
  }
  if (runTime === null && buffers === null) buffers = WINDOWS_DEFAULTS.buffers;

  return WindowsOptions.parse({
    role,
    mappings,
    bufferLen: len,
    buffers,
    runTime,
    warmup: Math.max(0, warmup),
    cooldown: Math.max(0, cooldown),
    countTimeoutMs,
    basePort,
    syncPorts,
    noSync,
    timeoutMs: Math.max(0, timeoutMs),
    asyncBuffers,
    recvBuffer,
    sendBuffer,
    noDelay,
    udp,
    ipv6,
    nic,
    xmlFile,
    verbose,
    hidePerThread,
    throttleKBps,
    verify,
    // 5.40 reports the -icp value, or the thread count when -icp is absent (or negative).
    maxActiveThreads: maxActiveThreads < 0 ? threads : maxActiveThreads,
    ignored,
    notes,
  });
}
