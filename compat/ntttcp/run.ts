import { DataPlane } from "../../src/engine/data-plane.ts";
import { TestRun } from "../../src/engine/test-run.ts";
import type { Cut } from "../../src/engine/cut.ts";
import { UserError } from "../../src/errors.ts";
import { Interrupted, unlessAborted } from "../../src/signals.ts";
import type { Net, TcpListener } from "../../src/net/types.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { LinuxSyncReceiver, type LinuxSyncReceiverEvent } from "../../interop/ntttcp/linux-sync-receiver.ts";
import { LinuxSyncSender, type LinuxSyncSenderEvent } from "../../interop/ntttcp/linux-sync-sender.ts";
import type { Transport } from "../../interop/ntttcp/transport.ts";
import { WINDOWS_CONNECT_RETRIES, WINDOWS_CONNECT_RETRY_MS, WindowsTokenGate } from "../../interop/ntttcp/windows-token.ts";
import { connectControl, listenControl, type ControlHandlers } from "./control.ts";
import type { HeldSyncPort } from "./held-sync-port.ts";
import { cycleTiming } from "./cycle.ts";
import { sleep } from "../../lib/sleep.ts";
import { hostFigures } from "./host-figures.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { NtttcpResults, ThreadResult } from "./results.ts";
import { countReads, receiverSpecs, senderSpecs, type StreamLayout } from "./specs.ts";
import { peerAllowed, policyLimits, serverPolicy } from "../../src/access/server-policy.ts";
import { peerText } from "../../src/access/peer-text.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import { SyncSeats } from "./sync-seats.ts";
import { listenTokens, OtherSenders } from "./other-senders.ts";

/**
 * Runs one ntttcp plan: the data plane on the engine, the start protocol the plan names (Linux sync, Windows tokens,
 * none) over control sockets, the phase clock, and the end-of-run rules of docs/protocols/ntttcp-interop.md §5–6: a
 * sender keeps its connections open `lingerS` past its own cycle, sending nothing more, so the peer receiver sees no
 * close before its own end (both originals misbehave on one) and counts no byte the sender's window left out; a
 * receiver ends on its own clock whatever its ports saw.
 */

export type LogLevel = "INFO" | "ERR" | "DBG";

export interface RunIo {
  net: Net;
  signal: AbortSignal;
  log(level: LogLevel, text: string): void;
  /** Live throughput of the last interval (Linux "Real-time throughput" lines). */
  realtime?(bytes: number, seconds: number): void;
  /** Seconds a sender keeps sending after its cycle (not counted). */
  lingerS?: number;
  /** Interface and device names for --show-nic-packets / --show-dev-interrupts. */
  nic?: string;
  interruptsMatching?: string;
  /** Computer name and `uname -a` line for the files. */
  computerName: string;
  os: string;
  /** -H: the Linux sync port, kept open from one test to the next. */
  heldSync?: HeldSyncPort;
  /** The test's Test, as it starts (a front end other than `anyperf ntttcp` reports from it). */
  onRun?(run: TestRun): void;
}

/** How early a Linux sync receiver's state turns "finished" before its cycle's end (see runReceiver). */
const CYCLE_END_MARGIN_MS = 250;

/** How close to its end a Windows receiver's sender may close without "Unexpected disconnect" (see runReceiver). */
const DISCONNECT_MARGIN_MS = 300;

/** The real sender's run-time failure status (-1000 & 0xff). */
export const LINUX_EXIT_RUNTIME = 24;

function syncHost(p: NtttcpPlan): string {
  return p.threads[0]!.host;
}

/** A signal before the first byte: nothing was measured, so no 130/143 but the sender's "no test" status. */
const interruptedBeforeTest = () => new UserError("interrupted before the test started", 1);

/** Ctrl+C must not wait for a connect that a full backlog holds (SYNs dropped for up to 2 min). */
function connecting<T>(p: Promise<T>, signal: AbortSignal, late: (v: T) => void): Promise<T> {
  return unlessAborted(p, signal, late).catch((e: unknown) => {
    throw e instanceof Interrupted ? interruptedBeforeTest() : e;
  });
}

/**
 * Opens the data plane, retrying refused connects like the Windows sender (100 × 100 ms) when asked to; the Linux
 * sender tries once (ntttcp-for-linux logs the refused connect and starts no data thread).
 */
async function openPlane(layout: StreamLayout, retry: boolean, signal: AbortSignal): Promise<DataPlane> {
  const attempts = retry ? WINDOWS_CONNECT_RETRIES : 1;
  for (let i = 0; ; i++) {
    try {
      return await connecting(DataPlane.open(layout.specs), signal, (late) => void late.stop());
    } catch (e) {
      const refused = e instanceof UserError && /refused/.test(e.message);
      if (!refused || i + 1 >= attempts) throw e;
      if (signal.aborted) throw interruptedBeforeTest();
      await sleep(WINDOWS_CONNECT_RETRY_MS, signal);
    }
  }
}

function phaseLogs(run: TestRun, p: NtttcpPlan, io: RunIo, timing: { warmupS: number; cooldownS: number }): void {
  if (p.dialect === "windows") {
    // 5.40's -v progress lines (DBG: printed only with -v), one sample as without -sam.
    run.onPhase((ph) => {
      if (ph === "measuring") io.log("DBG", "start recording results for sample 0");
      if (ph === "cool-down") io.log("DBG", "stop recording results for sample 0");
    });
    return;
  }
  run.onPhase((ph) => {
    if (ph === "measuring" && timing.warmupS > 0) io.log("INFO", "Test warmup completed.");
    if (ph === "cool-down") {
      // Our own Ctrl+C/SIGTERM (not the peer's 'E'): 1.4.3 says so first, then ends the run as usual.
      if (run.interrupted && io.signal.aborted) io.log("INFO", "Interrupted by Ctrl+C");
      io.log("INFO", "Test run completed.");
      if (timing.cooldownS > 0) io.log("INFO", "Test cooldown is in progress...");
    }
  });
}

/** 5.40 says so once every thread has its connection (and token), both roles; -v adds its progress lines around. */
function windowsStart(io: RunIo): void {
  io.log("DBG", "All threads ready!");
  io.log("INFO", "Network activity progressing...");
  io.log("DBG", "test start");
}

function newRun(p: NtttcpPlan, io: RunIo, timing: { warmupS: number; durationS: number; cooldownS: number }): TestRun {
  const run = new TestRun(
    { mode: `ntttcp-${p.dialect}`, role: p.role, peer: syncHost(p), transport: p.protocol, test: "stream" },
    { ...timing, intervalS: 0.5 },
  );
  if (io.realtime) {
    run.onInterval((i) => {
      if (i.phase !== "cool-down") io.realtime!(i.sum.bytes, i.sum.seconds);
    });
  }
  phaseLogs(run, p, io, timing);
  io.onRun?.(run);
  return run;
}

function results(p: NtttcpPlan, run: TestRun, layout: StreamLayout, plane: DataPlane, io: RunIo): NtttcpResults {
  // Bytes, I/O calls (Windows "Avg B / Compl") and the measured time all come from the test's own window cuts.
  const doc = run.results();
  const moved = run.measured().streams(plane) ?? [];
  const seconds = doc.phases.measured_s;
  const threads = new Map<number, ThreadResult>(p.threads.map((t) => [t.index, { index: t.index, bytes: 0, ios: 0, seconds }]));
  // The Worker counts one I/O per -l bytes at most; a cut can still fall between a read's count and its bytes, so a
  // stream's I/O count is at least its bytes over -l (Avg B / Compl <= -l, as 5.40's can never exceed it).
  const ioSize = p.role === "sender" ? p.writeSize : p.readSize;
  layout.threadOf.forEach((thread, i) => {
    const r = threads.get(thread)!;
    r.bytes += doc.streams[i]?.bytes ?? 0;
    r.ios = (r.ios ?? 0) + Math.max(moved[i]?.packets ?? 0, Math.ceil((moved[i]?.bytes ?? 0) / ioSize));
  });
  const list = [...threads.values()];
  // Connections the senders opened over the whole test, set-up included.
  const sinceOpen = run.since(run.originAt(0)).streams(plane) ?? [];
  return {
    role: p.role,
    protocol: p.protocol,
    seconds,
    threads: list,
    totalBytes: list.reduce((n, t) => n + t.bytes, 0),
    connections: p.role === "sender" ? sinceOpen.reduce((n, s) => n + (p.protocol === "udp" ? 1 : s.connections), 0) : 0,
    host: {
      ...hostFigures(doc.cpu.host, {
        protocol: p.protocol,
        nic: io.nic,
        interruptsMatching: io.interruptsMatching,
        allInterrupts: p.dialect === "windows",
      }),
      // The engine's mean of each sending socket's TCP_INFO rtt (absent where TCP_INFO cannot be read).
      tcpRttUs: p.role === "sender" ? doc.summary.rtt_us : undefined,
    },
    computerName: io.computerName,
    os: io.os,
  };
}

/** Aborts when the user interrupts or the peer's protocol says the test is over. */
function linked(signal: AbortSignal): AbortController {
  const c = new AbortController();
  if (signal.aborted) c.abort(signal.reason);
  else signal.addEventListener("abort", () => c.abort(signal.reason), { once: true });
  return c;
}

/**
 * The receiver's share of --allow and --max-duration: sync and token connections from outside --allow are closed
 * at accept; a sender that negotiates a longer (or continuous) cycle ends the run with a refusal. Data connections
 * and datagrams are checked by the Workers that accept them (StreamSpec.allow, from receiverSpecs).
 */
function receiverPolicy(p: NtttcpPlan, io: RunIo) {
  const policy = serverPolicy();
  const max = policyLimits(policy).maxDurationS;
  const own = p.warmup + p.duration + p.cooldown;
  if (max && own > max.value) {
    throw new UserError(`this receiver's own cycle (-W/-t/-C) is ${own} s, above ${max.flag} ${max.value}: lower -t or raise ${max.flag}`, 2);
  }
  const refusals = new RefusalLog((line) => io.log("ERR", line));
  return {
    admit: (peer: { host: string | undefined; port: number | undefined }) => {
      if (peerAllowed(peer.host, policy)) return true;
      refusals.refused(`refused ${peerText(peer.host, peer.port)}: not in --allow`);
      return false;
    },
    /** Why a negotiated cycle (seconds; 0 = continuous) is refused, or undefined. */
    cycleRefusal: (cycle: number) => {
      if (!max || (cycle > 0 && cycle <= max.value)) return undefined;
      const asks = cycle === 0 ? "a continuous test" : `${cycle} s`;
      return `sender asks for ${asks}; this receiver allows ${max.value} s (${max.flag})`;
    },
  };
}

/**
 * 5.40's receiver thread whose recv() returns 0 before the test ends (its sender closed first, or was killed) fails
 * with these lines, and the run says so after every thread; the results are printed all the same and the exit status
 * stays 0 (docs/protocols/ntttcp-windows.md §5.1). In count mode a close after the thread's -n buffers is the normal
 * end. (ntttcp-for-linux says nothing: its receiver prints the results and then never exits.)
 */
function reportDisconnects(p: NtttcpPlan, sinceOpen: { closed: number; packets: number }[], io: RunIo): void {
  const early = (s: { closed: number; packets: number }) => s.closed > 0 && (countReads(p) === 0 || s.packets < countReads(p));
  const failed = p.threads.filter((_, i) => sinceOpen[i] !== undefined && early(sinceOpen[i]!));
  for (const t of failed) {
    io.log("ERR", "DoSendsReceives failed: Unexpected disconnect");
    io.log("ERR", "DoSendsReceives failed: error in send/recv");
    io.log("ERR", `StartSenderReceiver in thread: ${t.index} failed: error in send/recv`);
  }
  if (failed.length === 0) return;
  io.log("ERR", "DoWork failed: one or more worker threads failed");
  io.log("ERR", "main failed: one or more worker threads failed");
}

export async function runReceiver(p: NtttcpPlan, io: RunIo): Promise<NtttcpResults> {
  const access = receiverPolicy(p, io);
  const layout = receiverSpecs(p, { sockopt: (await loadSockopt()) !== undefined, allow: serverPolicy().allow });
  const plane = await DataPlane.open(layout.specs);
  const stop = linked(io.signal);
  const listeners: TcpListener[] = [];
  let syncRx: LinuxSyncReceiver | undefined;
  let others: OtherSenders | undefined;
  let cycleEnd: ReturnType<typeof setTimeout> | undefined;
  // The run (and its /proc sampler) exists before the start trigger, so starting costs only a snapshot; the start
  // triggers are waits on it. A Linux sync sender's cycle, negotiated later, retimes it.
  const run = newRun(p, io, cycleTiming(p, undefined));
  run.attach(plane, "recv");
  // Settled once: the cycle the sender negotiated, or (settle(undefined)) our own -W/-t/-C.
  let settled = false;
  const settle = (cycle: number | undefined) => {
    if (settled) return;
    settled = true;
    run.retime({ ...cycleTiming(p, cycle), intervalS: run.timing.intervalS });
  };
  try {
    if (p.dialect === "linux") io.log("INFO", `${p.threads.length + (p.sync.kind === "linux" ? 1 : 0)} threads created`);
    let started: Promise<boolean>;
    let refused: string | undefined;
    if (p.sync.kind === "linux") {
      let resolveStart!: (v: boolean) => void;
      started = new Promise((r) => (resolveStart = r));
      io.signal.addEventListener("abort", () => resolveStart(false), { once: true });
      // Stopped already (its banner could not be written: src/output-failure.ts): the listener above never fires.
      if (io.signal.aborted) resolveStart(false);
      const rx = new LinuxSyncReceiver({ duration: p.duration, multiClient: p.sync.multiClient }, (e: LinuxSyncReceiverEvent) => {
        if (e.type === "log") io.log(e.level, e.text);
        else if (e.type === "negotiated" && (refused = access.cycleRefusal(e.cycle)) !== undefined) {
          // The sync protocol has no "no": the run ends and the sender sees its sync connection close.
          io.log("ERR", `refused the test: ${refused}`);
          resolveStart(false);
        } else if (e.type === "negotiated") settle(e.cycle);
        else if (e.type === "start") {
          // A sender that never proposed a cycle runs on the receiver's own -t.
          settle(undefined);
          // 1.4.3's state turns "finished" when its one cycle timer ends, before its sender (which starts on our reply)
          // ends its own cycle and sends 'E' whenever -W or -C made the cycle longer than the test. Our phases' timers
          // run one after another and a busy event loop runs them late, so such a normal 'E' could arrive while we are
          // still in the cool-down and read as an interruption: our state turns "finished" at the cycle's end, less a
          // margin for that lateness (a sender interrupted by Ctrl+C sends its 'E' well before).
          const { warmupS, durationS, cooldownS } = run.timing;
          if (durationS > 0) cycleEnd = setTimeout(() => rx.finish(), Math.max(0, (warmupS + durationS + cooldownS) * 1000 - CYCLE_END_MARGIN_MS));
          resolveStart(true);
        } else if (e.type === "interrupted") stop.abort("peer");
      });
      syncRx = rx;
      const tokens = p.sync.windowsTokens;
      others =
        tokens === undefined
          ? undefined
          : new OtherSenders({ net: io.net, plan: p, run, plane, offset: tokens, admit: access.admit, log: io.log }, () => {
              settle(undefined);
              // A Linux sync sender that asks now is told a test is running, as with a second Linux sender.
              rx.runningElsewhere();
              resolveStart(true);
            }, listeners);
      // Up to 8 senders take part in one test; 16 seats, and idle or half-message holders give theirs up.
      const seats = new SyncSeats<Transport>(16);
      const accept = (t: Transport): ControlHandlers | null => {
        const seat = seats.admit(t);
        if (seat === null) return null;
        seat.evict?.close();
        others?.linuxContact();
        const c = rx.attach(t);
        return { onData: (b) => (seats.received(t, b.length), c.onData(b)), onClose: () => (seats.leave(t), c.onClose()) };
      };
      if (io.heldSync) io.heldSync.open(syncHost(p), p.sync.port, accept, access.admit);
      else listeners.push(listenControl(io.net, syncHost(p), p.sync.port, accept, access.admit));
    } else {
      if (p.sync.kind === "windows") {
        const sync = p.sync;
        started = (async () => {
          // Windows opens its token listeners only once every thread accepted its data connection
          // (docs/protocols/ntttcp-windows.md §4.2).
          if (p.protocol === "tcp" && !(await run.reached("every stream connected", io.signal))) return false;
          let done!: (v: boolean) => void;
          const all = new Promise<boolean>((r) => (done = r));
          io.signal.addEventListener("abort", () => done(false), { once: true });
          if (io.signal.aborted) done(false);
          const gate = new WindowsTokenGate(p.threads.length, () => done(true), (i) => io.log("ERR", `token exchange on port ${p.threads[i]!.port + sync.offset} failed`));
          listenTokens({ net: io.net, plan: p, offset: sync.offset, admit: access.admit }, (i, tr) => gate.exchange(i, tr), listeners);
          return all;
        })();
      } else if (p.protocol === "udp") {
        // Both originals start a UDP receiver's clock at start-up; the first datagram is the fairer start
        // (docs/protocols/ntttcp-interop.md §5.2).
        started = run.reached("a byte moved", io.signal);
      } else if (p.dialect === "windows") {
        started = run.reached("every stream connected", io.signal);
      } else {
        // ntttcp-for-linux starts at the first accepted connection; its sender only writes once all its connections
        // exist, so the first byte is the same instant for the sender and a fairer one for the receiver.
        started = run.reached("a byte moved", io.signal);
      }
    }
    const began = await started;
    others?.stop();
    if (!began && refused !== undefined) throw new UserError(`refused the sender's test: ${refused}`, 1);
    if (!began) throw new UserError("interrupted before the test started: no sender connected", 1);
    const r = run;
    if (p.dialect === "windows") windowsStart(io);
    // A Windows receiver counts a sender's close as an error only well before its own end: its clock starts when the
    // last connection is seen (polled), so a sender ending on its own clock may close a moment before ours ends.
    const { warmupS, durationS, cooldownS } = r.timing;
    let tail: Cut | undefined;
    const windows = p.dialect === "windows" && p.protocol === "tcp";
    const tailTimer = windows && durationS > 0 ? setTimeout(() => (tail = r.cut()), Math.max(0, (warmupS + durationS + cooldownS) * 1000 - DISCONNECT_MARGIN_MS)) : undefined;
    await r.runTimed(stop.signal);
    if (p.dialect === "windows") io.log("DBG", "test finish");
    clearTimeout(tailTimer);
    if (windows && (durationS === 0 || tail)) reportDisconnects(p, r.between(r.originAt(0), tail ?? r.cut()).streams(plane) ?? [], io);
    syncRx?.finish();
    io.heldSync?.close();
    if (p.dialect === "linux") io.log("INFO", "Test cycle finished.");
    r.finish();
    return results(p, r, layout, plane, io);
  } finally {
    io.heldSync?.close();
    others?.stop();
    clearTimeout(cycleEnd);
    if (run.phase !== "done") run.finish();
    await plane.stop();
    // Late 'E' from a sender with a cool-down still gets its 13 before the sync port closes.
    if (syncRx) await sleep(300);
    syncRx?.closeAll();
    for (const l of listeners) l.stop(true);
  }
}

export async function runSender(p: NtttcpPlan, io: RunIo): Promise<NtttcpResults> {
  const layout = senderSpecs(p);
  const stop = linked(io.signal);
  const linger = io.lingerS ?? 1;
  let plane: DataPlane | undefined;
  let session: LinuxSyncSender | undefined;
  const connectStart = performance.now();
  const created = () => {
    if (p.dialect !== "linux") return;
    io.log("INFO", `${p.threads.length} threads created`);
    io.log("INFO", `${p.totalConnections} connections created in ${Math.round((performance.now() - connectStart) * 1000)} microseconds`);
  };
  try {
    let cycle: number | undefined;
    if (p.sync.kind === "linux") {
      const sync = p.sync;
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const started = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      const cycleS = p.warmup + p.duration + p.cooldown;
      try {
        await connecting(connectControl(io.net, syncHost(p), sync.port, (t) => {
          session = new LinuxSyncSender({ cycle: cycleS, duration: p.duration, last: sync.lastClient }, t, (e: LinuxSyncSenderEvent) => {
            if (e.type === "log") io.log(e.level, e.text);
            else if (e.type === "negotiated") cycle = e.cycle;
            else if (e.type === "connect-data") {
              openPlane(layout, false, io.signal).then(
                (pl) => {
                  plane = pl;
                  created();
                  session!.dataReady();
                },
                (err: Error) => reject(err),
              );
            } else if (e.type === "start") resolve();
            else if (e.type === "failed") reject(new UserError(`${e.message}: check the receiver (same -p, started first, not busy)`, LINUX_EXIT_RUNTIME));
          });
          return { onData: (b) => session!.onData(b), onClose: () => session!.onClose() };
        }, undefined, p.sourceAddress), io.signal, (late) => late.close());
      } catch (e) {
        if (io.signal.aborted) throw interruptedBeforeTest();
        io.log("ERR", `failed to connect to receiver: ${syncHost(p)}:${sync.port}`);
        io.log("ERR", "sender: failed to create sync socket");
        // "Start the receiver" fits a refusal only; an unreachable network or a timeout gets its own cause and fix.
        const code = (e as { code?: string }).code;
        if (code !== undefined && code !== "ECONNREFUSED") throw new UserError(`sync port: ${(e as Error).message}`, LINUX_EXIT_RUNTIME);
        throw new UserError(`cannot reach the receiver's sync port ${syncHost(p)}:${sync.port}: start the receiver first (without -N), or pass -N on both sides`, LINUX_EXIT_RUNTIME);
      }
      const timer = setTimeout(() => reject(new UserError("the receiver did not answer the sync handshake within 60 s: check that it is ntttcp-for-linux in sync mode", LINUX_EXIT_RUNTIME)), 60_000);
      io.signal.addEventListener("abort", () => reject(interruptedBeforeTest()), { once: true });
      try {
        session!.start();
        await started;
      } finally {
        clearTimeout(timer);
      }
    } else {
      if (p.dialect === "linux") io.log("INFO", "Starting sender activity (no sync) ...");
      plane = await openPlane(layout, p.dialect === "windows", io.signal).catch((e: unknown) => {
        // A failed data connect is a run-time failure like a refused sync port: 24, not the generic 1. (1.4.3 itself
        // logs the refused connect, then waits for its data thread forever.)
        if (p.dialect !== "linux" || !(e instanceof UserError) || e.code === undefined) throw e;
        throw new UserError(e.message, LINUX_EXIT_RUNTIME, e.code);
      });
      created();
      if (p.sync.kind === "windows") {
        const sync = p.sync;
        let done!: (ok: boolean) => void;
        const all = new Promise<boolean>((r) => (done = r));
        const gate = new WindowsTokenGate(p.threads.length, () => done(true), () => done(false));
        await Promise.all(
          p.threads.map((t, i) =>
            connectControl(io.net, t.host, t.port + sync.offset, (tr) => {
              const x = gate.exchange(i, tr);
              queueMicrotask(() => x.start());
              return { onData: (b) => x.onData(b), onClose: () => x.onClose() };
            }, { attempts: WINDOWS_CONNECT_RETRIES, delayMs: WINDOWS_CONNECT_RETRY_MS }, p.sourceAddress),
          ),
        ).catch(() => done(false));
        io.signal.addEventListener("abort", () => done(false), { once: true });
        const ok = await all;
        if (!ok && io.signal.aborted) throw interruptedBeforeTest();
        if (!ok) throw new UserError(`token exchange on data port + ${sync.offset} failed: start the receiver in Windows sync mode, or pass -ns on both sides`, 1);
      }
      if (p.dialect === "windows") windowsStart(io);
    }
    const pl = plane!;
    const timing = cycleTiming(p, cycle);
    const run = newRun(p, io, timing);
    run.attach(pl, "send");
    // No write after the window's end cut without a cool-down to send through: a receiver that ends at our close
    // (`anyperf serve`) then counts what this window counted, less what is still in flight (the Workers see the pause
    // within a slice of the cut).
    if (timing.cooldownS === 0) run.onPhase((ph) => ph === "cool-down" && pl.pause());
    // Without a warm-up the window opens before the first write, so a count-mode run counts every buffer (5.40 does).
    if (timing.warmupS === 0) run.beginMeasuring();
    pl.go();
    await run.runTimed(stop.signal);
    // After a cool-down, or an interrupted run: the linger below keeps the connections open without data.
    pl.pause();
    if (p.dialect === "windows") io.log("DBG", "test finish");
    const interrupted = run.interrupted;
    if (p.dialect === "linux") io.log("INFO", "Test cycle finished.");
    run.finish();
    const out = results(p, run, layout, pl, io);
    if (session) {
      const s = session;
      const cutShort = interrupted || cycle === undefined || cycle === 0 || out.seconds + 0.25 < cycle;
      const ended = new Promise<void>((r) => {
        const t = setTimeout(() => (s.endTimedOut(), r()), 2000);
        const poll = setInterval(() => {
          if (s.phase === "done" || s.phase === "failed") (clearTimeout(t), clearInterval(poll), r());
        }, 5);
      });
      s.end(cutShort);
      await ended;
    }
    // The connections stay open a little longer, so the peer's window ends before it sees them close
    // (docs/protocols/ntttcp-interop.md §5.3 step 4).
    if (!interrupted && linger > 0) await sleep(linger * 1000, io.signal);
    return out;
  } finally {
    await plane?.stop();
  }
}
