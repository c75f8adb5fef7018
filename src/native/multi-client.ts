/**
 * `anyperf client H1 H2 ...`: one test across many native servers. Every server's session is set up first (welcomed,
 * ports answered, this end's planes open); then one TestRun holds every plane, so one cut measures every server's
 * streams at the same instant and the measured window is common to all of them. Its window edges go to every
 * server at once, so each server's own window is cut on the same instants, give or take its control path.
 */
import { WorkerPool, cores } from "../engine/worker-pool.ts";
import { TestRun, figures } from "../engine/test-run.ts";
import type { CommonWindow } from "../engine/common-window.ts";
import { resultsToFollow, settleResults } from "../engine/registry.ts";
import { UserError } from "../errors.ts";
import { ensureFdLimit, fdsNeeded } from "../host/fd-limit.ts";
import type { Plan } from "../plan.ts";
import type { HostResult, RemoteEnd, Results } from "../report/result.ts";
import { ALIVE_EVERY_MS } from "./protocol/messages.ts";
import { drainReceivers, failureLine, openHost, sendOnce, type ClientTarget, type HostLink } from "./client.ts";
import { halves, requestOf } from "./request.ts";
import { wholeRun } from "./whole-run.ts";

interface Joined {
  link: HostLink;
  /** The session's next step once the test runs: its results, or how it failed. */
  gone: Promise<Awaited<ReturnType<HostLink["steps"]["next"]>>>;
  error?: string;
}

/**
 * With `common`, this run is one of several Tests side by side (stock servers beside these, each driven by its own
 * front end): the servers' windows are cut on the common window's edges and every row is figured over it.
 */
export async function runMultiHostClient(plan: Plan, targets: readonly ClientTarget[], hooks: { signal: AbortSignal; onRun?: (run: TestRun) => void; common?: CommonWindow }): Promise<Results> {
  const direction = targets[0]!.direction;
  const req = requestOf(plan, direction);
  const { sends, receives } = halves(req, "client");
  const streams = plan.streams * targets.length;
  await ensureFdLimit(fdsNeeded(streams, plan.test, { sends, receives }), `-P ${plan.streams} × ${targets.length} servers`);
  WorkerPool.shared({ workers: Math.min(streams * (sends && receives ? 2 : 1), Math.max(2, cores())) });
  // Set up every server before any sends: a server that refuses or fails here is named and left out.
  const opened = await Promise.allSettled(targets.map((t) => openHost(plan, t, hooks.signal)));
  const rows: (HostResult & { joined?: Joined })[] = opened.map((o, i) => {
    const t = targets[i]!;
    const base = { host: t.host, port: t.port, peer: "anyperf" as const };
    if (o.status === "rejected") return { ...base, error: (o.reason as Error).message };
    return { ...base, joined: { link: o.value, gone: Promise.resolve({ kind: "interrupted" as const }) } };
  });
  const live = rows.flatMap((r) => (r.joined ? [r.joined] : []));
  if (hooks.signal.aborted || live.length === 0) {
    await Promise.all(live.map((j) => j.link.close()));
    throw new UserError(hooks.signal.aborted ? "interrupted during setup" : rows.map((r) => r.error).join("; "), hooks.signal.aborted ? 130 : 1);
  }
  let alive: ReturnType<typeof setInterval> | undefined;
  try {
    const run = new TestRun(
      { mode: "client", role: "client", peer: `${live.length} servers`, transport: plan.transport, test: plan.test },
      { warmupS: plan.warmupS, durationS: req.durationS, cooldownS: plan.cooldownS, intervalS: plan.intervalS },
    );
    for (const { link } of live) {
      if (link.rx) run.attach(link.rx, "recv");
      if (link.tx) run.attach(link.tx, plan.test === "stream" ? "send" : "client");
    }
    const starts = live.map((j) => sendOnce(j.link));
    const edge = (e: "start" | "end", atMs: number) => live.forEach((j) => j.link.session.window(e, atMs));
    run.onPhase((p) => {
      if (p === "warm-up") for (const s of starts) s();
      if (hooks.common) return;
      if (p === "measuring") edge("start", performance.now());
      if (p === "cool-down") edge("end", performance.now());
    });
    hooks.common?.onEdge((e, atMs) => edge(e === "open" ? "start" : "end", atMs));
    hooks.common?.follow(run);
    hooks.onRun?.(run);
    alive = setInterval(() => live.forEach((j) => j.link.session.alive()), ALIVE_EVERY_MS);
    // A server that fails mid-test is named; the others run on to the end of the window.
    for (const j of live) {
      j.gone = j.link.steps.next();
      void j.gone.then((e) => {
        if (e.kind === "failed") j.error = failureLine(j.link.at, e);
      });
    }
    await run.runTimed(hooks.signal);
    await Promise.all(live.map((j) => j.link.tx?.stop()));
    clearInterval(alive);
    const remotes = await Promise.all(live.map((j) => remoteOf(j)));
    await Promise.all(live.map((j) => drainReceivers(plan, j.link.rx)));
    resultsToFollow(run);
    run.finish();
    let final: Results | undefined;
    try {
      const window = hooks.common?.window(run) ?? run.measured();
      const weOnlySend = sends && !receives && plan.test === "stream";
      let k = 0;
      for (const r of rows) {
        if (!r.joined) continue;
        const { link } = r.joined;
        const remote = remotes[k++];
        const local = (plane: typeof link.rx, receiving: boolean) => (plane ? figures(window.streams(plane) ?? [], window.seconds, plan, receiving) : undefined);
        const own = local(link.rx, true) ?? local(link.tx, plan.test !== "stream")!;
        r.summary = weOnlySend ? (remote?.summary ? { ...remote.summary, cwnd: own.cwnd } : undefined) : own;
        if (weOnlySend) r.sender = own;
        r.remote = remote;
        r.error = r.joined.error ?? (remote ? undefined : `${link.at}: the server sent no results`);
      }
      const hosts: HostResult[] = rows.map(({ joined: _, ...h }) => h);
      const local = run.results();
      const whole = weOnlySend ? { ...local, summary: wholeRun(hosts, local.summary.seconds, plan), sender: local.summary, receiver: undefined } : local;
      if (weOnlySend) whole.receiver = whole.summary;
      final = { ...whole, hosts, errors: [...whole.errors, ...hosts.flatMap((h) => (h.error ? [h.error] : []))] };
      return final;
    } finally {
      settleResults(run, final);
    }
  } finally {
    clearInterval(alive);
    await Promise.all(live.map((j) => j.link.close()));
  }
}

/** The server's half once told to finish: undefined when it failed or was lost (Ctrl+C). */
async function remoteOf(j: Joined): Promise<RemoteEnd | undefined> {
  j.link.session.finish(performance.now());
  let answer = await j.gone;
  if (answer.kind === "interrupted") answer = await j.link.steps.next();
  return answer.kind === "results" ? answer.results : undefined;
}
