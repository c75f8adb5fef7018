/**
 * `anyperf client HOST`'s run: the control connection to a native server (src/native/protocol/), this end's streams on
 * the engine's Workers, one TestRun whose window both ends cut, and the server's results folded into ours.
 */
import { DataPlane } from "../engine/data-plane.ts";
import { TestRun } from "../engine/test-run.ts";
import { WorkerPool, cores } from "../engine/worker-pool.ts";
import { UserError, explainSocketError } from "../errors.ts";
import { Interrupted, interruptedExitCode, unlessAborted } from "../signals.ts";
import { loadNet } from "../net/net.ts";
import { QueuedWriter } from "../net/queued-writer.ts";
import type { TcpSocket } from "../net/types.ts";
import { loadSockopt } from "../sockopt/sockopt.ts";
import { connectTcp } from "../worker/sockets.ts";
import type { Plan } from "../plan.ts";
import { receivers, senders } from "../plan-streams.ts";
import type { RemoteEnd, Results } from "../report/result.ts";
import { resultsToFollow, settleResults } from "../engine/registry.ts";
import { VERSION } from "../version.ts";
import { ClientSession, type ClientEvent } from "./protocol/client-session.ts";
import { ALIVE_EVERY_MS } from "./protocol/messages.ts";
import { DEADLINE_MS } from "./protocol/transport.ts";
import { halves, requestOf, type Direction } from "./request.ts";
import { diagnoseRun } from "./diagnose-run.ts";
import { socketBuffers } from "./socket-buffers.ts";
import { FlowWatch } from "../flows.ts";
import { ensureFdLimit, fdsNeeded } from "../host/fd-limit.ts";
import { NATIVE_DEFAULT_PORT } from "./server.ts";

const CHECK_MS = 100;

export interface ClientTarget {
  host: string;
  port: number;
  token?: string;
  direction: Direction;
  /** --link-speed: the link's rate when this host cannot read it (shaped, virtual). */
  linkSpeedBps?: number;
  /** -l was given: the write size is the user's, not our default (a stock peer that cannot take it refuses it). */
  lengthGiven?: boolean;
}

type Failure = Extract<ClientEvent, { kind: "failed" }>;

/** The server went away (closed, or silent past its deadline), as opposed to ending the test with a reason of its own. */
const serverLost = (f: Failure): boolean => f.cause === "closed" || f.cause === "timeout";

/** The one line a failed session ends with: what happened at HOST:PORT and what to do. */
export function failureLine(at: string, f: Failure): string {
  const serve = `point -p at the port of 'anyperf serve' (native default ${NATIVE_DEFAULT_PORT})`;
  const early = f.phase === "hello";
  switch (f.cause) {
    case "refused":
      return `${at} refused: ${f.detail}`;
    case "not-anyperf":
      return `${at} is not an anyperf server (${f.detail}): ${serve}`;
    case "timeout":
      return early ? `${at} accepted the connection but gave no anyperf answer within ${DEADLINE_MS.handshake / 1000} s (another tool's server?): ${serve}` : `${at} stopped answering: ${f.detail}; check the server and the network`;
    case "closed":
      return early ? `${at} closed the connection before answering: not an anyperf server (${serve}), or its --allow does not admit this host` : `${at}: ${f.detail}; see the server's log`;
    case "server-error":
      return `${at}: server error: ${f.detail}; see the server's log`;
  }
}

const bracket = (h: string) => (h.includes(":") ? `[${h}]` : h);

/** Resolves with the open control socket; Ctrl+C or the deadline ends the wait (and drops a late socket). */
async function connectControl(
  target: ClientTarget,
  signal: AbortSignal,
  handlers: { data(d: Uint8Array): void; drain(): void; close(): void },
): Promise<TcpSocket<undefined>> {
  const [net, sockopt] = await Promise.all([loadNet(), loadSockopt()]);
  const at = `${bracket(target.host)}:${target.port}`;
  // Through connectTcp: the runtime calls every failed connect "refused"; SO_ERROR names the real cause.
  const pending = connectTcp<undefined>({ net, sockopt }, { host: target.host, port: target.port }, undefined, {}, undefined, {
    data: (_s, d) => handlers.data(d),
    drain: () => handlers.drain(),
    close: () => handlers.close(),
    error: () => {},
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UserError(`connecting to ${at} timed out after ${DEADLINE_MS.handshake / 1000} s: check that the host is up and no firewall drops the port`)), DEADLINE_MS.handshake);
  });
  try {
    return await unlessAborted(Promise.race([pending, deadline]), signal, (late) => late.terminate());
  } catch (e) {
    pending.then((s) => s.terminate(), () => {});
    if (e instanceof Interrupted) throw new UserError(`interrupted while connecting to ${at}`, interruptedExitCode(signal));
    const code = (e as { code?: string }).code;
    if (code !== "ECONNREFUSED" && e instanceof UserError) throw e;
    if (code === "ECONNREFUSED") throw new UserError(`connection to ${at} refused: start 'anyperf serve' there, or pass its port with -p (native default ${NATIVE_DEFAULT_PORT})`, 1, code);
    throw explainSocketError(e, { host: target.host, port: target.port, role: "connect" });
  } finally {
    clearTimeout(timer);
  }
}

/** What the run waits for: the session's events, and Ctrl+C. */
type Step = ClientEvent | { kind: "interrupted" };

/** Session events (and Ctrl+C) as awaitable steps, in order. */
export class Steps {
  private queue: Step[] = [];
  private waiter: ((e: Step) => void) | undefined;

  push(e: Step): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(e);
    } else this.queue.push(e);
  }

  next(): Promise<Step> {
    const e = this.queue.shift();
    if (e) return Promise.resolve(e);
    return new Promise((r) => (this.waiter = r));
  }
}

/**
 * One server's side of a run, set up to the point where data may flow: the control session welcomed and answered
 * with ports, this end's planes open (receivers before the request, senders once the server is ready). A run over
 * many servers opens one per server before any of them sends.
 */
export interface HostLink {
  at: string;
  target: ClientTarget;
  session: ClientSession;
  steps: Steps;
  rx?: DataPlane;
  tx?: DataPlane;
  /** What the session's "started" (the server cut its window start) does. */
  onStarted: () => void;
  /** The next step, which must be `kind`; anything else ends the run with its one line. */
  expect<K extends ClientEvent["kind"]>(kind: K): Promise<Extract<ClientEvent, { kind: K }>>;
  /** Stops the deadline checks and the Ctrl+C watch, tells the server we are done, stops this end's planes. */
  close(): Promise<void>;
}

export async function openHost(plan: Plan, target: ClientTarget, signal: AbortSignal, beforePlanes = () => {}): Promise<HostLink> {
  const at = `${bracket(target.host)}:${target.port}`;
  const req = requestOf(plan, target.direction);
  const { sends, receives } = halves(req, "client");
  const steps = new Steps();
  let writer: QueuedWriter | undefined;
  let session: ClientSession | undefined;
  const socket = await connectControl(target, signal, {
    data: (d) => session?.receive(d, performance.now()),
    drain: () => writer?.drain(),
    close: () => session?.eof(),
  });
  writer = new QueuedWriter(socket as TcpSocket<unknown>);
  const s = new ClientSession(writer, (e) => (e.kind === "started" ? link.onStarted() : steps.push(e)), { version: VERSION, token: target.token });
  session = s;
  const ticker = setInterval(() => s.check(performance.now()), CHECK_MS);
  const onAbort = () => steps.push({ kind: "interrupted" });
  signal.addEventListener("abort", onAbort);
  const link: HostLink = {
    at,
    target,
    session: s,
    steps,
    onStarted: () => {},
    async expect(kind) {
      const e = await steps.next();
      if (e.kind === kind) return e as never;
      if (e.kind === "interrupted") {
        s.abort("client interrupted");
        throw new UserError(`interrupted (${s.phase === "done" ? "before the test ran" : "during setup"})`, interruptedExitCode(signal));
      }
      if (e.kind === "failed") throw new UserError(failureLine(at, e));
      throw new UserError(`${at}: unexpected ${e.kind} from the server`);
    },
    async close() {
      clearInterval(ticker);
      signal.removeEventListener("abort", onAbort);
      s.abort("client ended");
      await Promise.all([link.tx?.stop(), link.rx?.stop()]);
    },
  };
  try {
    s.start(performance.now());
    await link.expect("welcome");
    beforePlanes();
    const sockopt = await loadSockopt();
    if (receives) link.rx = await DataPlane.open(receivers(plan, { host: target.host.includes(":") ? "::" : "0.0.0.0", canSetOptions: sockopt !== undefined }));
    s.request(req, link.rx ? link.rx.localPorts.map((p) => p!) : [], performance.now());
    const ready = await link.expect("ready");
    if (sends) link.tx = await DataPlane.open(senders(plan, { host: target.host, ports: ready.ports }));
    return link;
  } catch (e) {
    await link.close();
    throw e;
  }
}

/**
 * Sends from one link's senders once: with warm-up the data starts with it; without, only once the server has cut
 * its start ("started"), so neither end misses a byte.
 */
export function sendOnce(link: HostLink): () => void {
  let sending = false;
  const start = () => {
    if (sending) return;
    sending = true;
    link.session.go();
    link.tx?.go();
  };
  link.onStarted = start;
  return start;
}

export async function runNativeClient(plan: Plan, target: ClientTarget, hooks: { signal: AbortSignal; onRun?: (run: TestRun) => void }): Promise<Results> {
  const req = requestOf(plan, target.direction);
  const { sends, receives } = halves(req, "client");
  await ensureFdLimit(fdsNeeded(plan.streams, plan.test, { sends, receives }), `-P ${plan.streams}`);
  let flows: FlowWatch | undefined;
  const link = await openHost(plan, target, hooks.signal, () => {
    flows = new FlowWatch(plan.streams);
    WorkerPool.shared({ workers: Math.min(plan.streams * (sends && receives ? 2 : 1), Math.max(2, cores())) });
  });
  const { at, session: s, steps, rx, tx } = link;
  let alive: ReturnType<typeof setInterval> | undefined;
  try {
    const run = new TestRun(
      { mode: "client", role: "client", peer: at, transport: plan.transport, test: plan.test },
      { warmupS: plan.warmupS, durationS: req.durationS, cooldownS: plan.cooldownS, intervalS: plan.intervalS },
    );
    if (rx) run.attach(rx, "recv");
    if (tx) run.attach(tx, plan.test === "stream" ? "send" : "client");
    // The server cuts its window when ours is cut: each edge goes out right after our snapshot.
    const startSending = sendOnce(link);
    run.onPhase((p) => {
      if (p === "warm-up") startSending();
      if (p === "measuring") s.window("start", performance.now());
      if (p === "cool-down") s.window("end", performance.now());
    });
    hooks.onRun?.(run);
    alive = setInterval(() => s.alive(), ALIVE_EVERY_MS);
    const serverGone = steps.next();
    const runDone = run.runTimed(hooks.signal);
    // A server that fails mid-test ends the run at once (its error is named beside what we measured); Ctrl+C lets runTimed end
    // the window, and the server's results are still worth waiting for (a second Ctrl+C exits at once).
    const early = await Promise.race([runDone.then(() => undefined), serverGone]);
    let remote: RemoteEnd | undefined;
    // The server lost mid-test (its control connection closed or silent): what this end measured until then is still
    // the report, with why it ended. A server that ends the test itself (its error names the cause and the fix, as
    // --max-rate's) is the one line a refusal is.
    let lost: string | undefined;
    if (early && early.kind !== "interrupted") {
      await Promise.all([tx?.stop(), rx?.stop()]);
      if (early.kind !== "failed" || !serverLost(early)) {
        run.finish();
        throw new UserError(early.kind === "failed" ? failureLine(at, early) : `${at}: unexpected ${early.kind} from the server during the test`);
      }
      lost = failureLine(at, early);
    } else {
      await runDone;
      flows?.measured();
      await tx?.stop();
      clearInterval(alive);
      s.finish(performance.now());
      let answer = await serverGone;
      const interrupted = answer.kind === "interrupted";
      if (interrupted) answer = await steps.next();
      // Interrupted, we print what we have even when the server's half is lost.
      if (answer.kind === "failed" && !interrupted) {
        if (!serverLost(answer)) throw new UserError(failureLine(at, answer));
        lost = failureLine(at, answer);
      }
      remote = answer.kind === "results" ? answer.results : undefined;
      await drainReceivers(plan, rx);
    }
    // /status shows the run done at once; its /results wait for the server's half and the diagnosis.
    resultsToFollow(run);
    run.finish();
    let final: Results | undefined;
    try {
      const buffers = socketBuffers(plan.socket.sendBuffer, { send: tx, recv: rx });
      const targetBps = plan.bitsPerSecond * plan.streams;
      const local = run.results();
      const combined = combine({ ...local, ...(lost ? { errors: [...local.errors, lost] } : {}), ...(buffers ? { socket_buffers: buffers } : {}), ...(targetBps > 0 ? { target_bps: targetBps } : {}) }, remote, sends && !receives && plan.test === "stream");
      const results = flows ? withFlows(combined, flows) : combined;
      const diagnosis = await diagnoseRun(results, { server: target.host, localSends: sends, linkSpeedBps: target.linkSpeedBps, targetBps });
      final = diagnosis ? { ...results, diagnosis } : results;
      return final;
    } finally {
      settleResults(run, final);
    }
  } finally {
    clearInterval(alive);
    await link.close();
  }
}

/** Waits (bounded) for this end's receivers to see their senders' close, then stops them. */
export async function drainReceivers(plan: Plan, rx: DataPlane | undefined): Promise<void> {
  if (!rx) return;
  await Promise.race([rx.ended, new Promise((r) => setTimeout(r, plan.transport === "udp" ? 200 : 2_000))]);
  await rx.stop();
}

/** This process's flows; their rates from whichever end measures them (the server's receivers when only we send). */
function withFlows(r: Results, flows: FlowWatch): Results {
  return { ...r, flows: flows.figures([...r.streams, ...(r.remote?.streams ?? [])]) };
}

/**
 * Our results with the server's end beside them. When only we send, the receiver that reports is the server: the
 * summary is its figures (as iperf3 reports the receiver), ours stay as `sender`.
 */
export function combine(local: Results, remote: RemoteEnd | undefined, weOnlySend: boolean): Results {
  if (!remote) return { ...local, errors: [...local.errors, "the server sent no results"] };
  // The congestion window shown is the sending end's: with -R the server's.
  if (!weOnlySend) return { ...local, summary: { ...local.summary, cwnd: local.summary.cwnd ?? remote.sender?.cwnd ?? remote.summary?.cwnd }, remote };
  // A receiver that reports nothing of its end (an iperf 2 TCP server) leaves our senders' figures as the summary.
  if (!remote.summary) return { ...local, sender: local.summary, remote };
  return { ...local, summary: { ...remote.summary, cwnd: local.summary.cwnd }, sender: local.summary, receiver: remote.summary, remote };
}
