/**
 * `anyperf client H1 H2 ...` where some servers are stock ones (iperf3, netserver, iperf 2, an ntttcp receiver): the
 * anyperf serves run as one native Test (src/native/multi-client.ts) and every stock server through its dialect's
 * own client, all started together. Their Tests run side by side on their own clocks, so the run is measured over
 * the engine's common window (src/engine/common-window.ts): from the instant the last one began measuring to the
 * instant the first one stopped, every Test cut at both. Each row's figures, the whole run and this host's NICs and
 * cores are that window's. A stock server cannot cut its own count on our instants: its row is this host's end of
 * its streams, and what it reported of its own window is its `remote`.
 */
import { CommonWindow } from "../../src/engine/common-window.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { UserError } from "../../src/errors.ts";
import type { Plan } from "../../src/plan.ts";
import type { HostResult, Results, StreamFigures } from "../../src/report/result.ts";
import type { ClientTarget } from "../../src/native/client.ts";
import { runMultiHostClient } from "../../src/native/multi-client.ts";
import { wholeRun } from "../../src/native/whole-run.ts";
import { VERSION } from "../../src/version.ts";
import type { PeerName } from "./detect.ts";

/** A server of the run and what serves it. */
export interface Served {
  target: ClientTarget;
  peer: PeerName;
  version?: string;
}

/** How a stock server's test is run: its dialect's client, reporting through its own Test (onRun). */
export type StockDriver = (plan: Plan, s: Served, hooks: { signal: AbortSignal; onRun: (run: TestRun) => void }) => Promise<Results>;

interface Part {
  served: Served[];
  run?: TestRun;
  outcome?: PromiseSettledResult<Results>;
}

type Totals = Results["totals"];

export async function runManyServers(plan: Plan, servers: readonly Served[], drive: StockDriver, hooks: { signal: AbortSignal }): Promise<Results> {
  const natives = servers.filter((s) => s.peer === "anyperf");
  const parts: Part[] = [...(natives.length ? [{ served: natives }] : []), ...servers.filter((s) => s.peer !== "anyperf").map((s) => ({ served: [s] }))];
  const common = new CommonWindow(parts.length, { host: true, latency: plan.test !== "stream" });
  const started = new Date();
  await Promise.all(
    parts.map(async (part) => {
      const onRun = (run: TestRun) => {
        part.run = run;
        common.follow(run);
      };
      const going = part.served[0]!.peer === "anyperf" ? runMultiHostClient(plan, part.served.map((s) => s.target), { signal: hooks.signal, common, onRun: (run) => (part.run = run) }) : drive(plan, part.served[0]!, { signal: hooks.signal, onRun });
      part.outcome = await going.then(
        (value) => ({ status: "fulfilled" as const, value }),
        (reason: unknown) => ({ status: "rejected" as const, reason }),
      );
      // A part that failed before its Test existed never joins: the window opens on the others.
      if (!part.run) common.drop();
    }),
  );
  const seconds = common.seconds;
  const failures = parts.flatMap(({ outcome: o, served }) => (o?.status === "rejected" ? served.map((s) => `${at(s)}: ${errorOf(o.reason)}`) : []));
  if (seconds === undefined) {
    if (hooks.signal.aborted) throw new UserError("interrupted before every server's test was running", 130);
    throw new UserError(failures.length ? failures.join("; ") : "the servers' tests never ran at the same time (one ended before the last began): run again, or run the slow one alone");
  }
  const rows: HostResult[] = [];
  const streams: StreamFigures[] = [];
  const totals: Totals[] = [];
  for (const part of parts) {
    const o = part.outcome!;
    const mine = part.run ? common.figures(part.run) : undefined;
    if (mine) streams.push(...mine.streams);
    if (o.status === "fulfilled") totals.push(o.value.totals);
    if (part.served[0]!.peer === "anyperf") {
      if (o.status === "fulfilled") rows.push(...(o.value.hosts ?? []));
      else rows.push(...part.served.map((s) => ({ host: s.target.host, port: s.target.port, peer: s.peer, error: errorOf(o.reason) })));
      continue;
    }
    const s = part.served[0]!;
    const row: HostResult = { host: s.target.host, port: s.target.port, peer: s.peer };
    if (mine) row.summary = mine.summary;
    if (o.status === "fulfilled") {
      if (o.value.remote) row.remote = o.value.remote;
      if (o.value.errors.length) row.error = o.value.errors.join("; ");
    } else row.error = errorOf(o.reason);
    rows.push(row);
  }
  // Rows in the order the servers were given.
  const order = (h: HostResult) => servers.findIndex((s) => s.target.host === h.host && s.target.port === h.port);
  rows.sort((a, b) => order(a) - order(b));
  const host = common.host();
  const summary = wholeRun(rows, seconds, plan);
  return {
    tool: "anyperf",
    version: VERSION,
    mode: "client",
    role: "client",
    peer: `${servers.length} servers`,
    transport: plan.transport,
    test: plan.test,
    started_at: started.toISOString(),
    interrupted: hooks.signal.aborted,
    phases: { warmup_s: plan.warmupS, measured_s: seconds, cooldown_s: plan.cooldownS },
    summary,
    totals: sumTotals(totals),
    streams: streams.map((s, id) => ({ ...s, id })),
    // Each Test cut its intervals on its own clock: none of them is the whole run's.
    intervals: [],
    cpu: { busy_percent: host?.cpu?.busy, process_percent: host?.process?.total, host },
    retransmits: summary.retransmits,
    hosts: rows,
    errors: rows.flatMap((h) => (h.error ? [`${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}: ${h.error}`] : [])),
  };
}

function at(s: Served): string {
  return `${s.target.host.includes(":") ? `[${s.target.host}]` : s.target.host}:${s.target.port}`;
}

function errorOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/** Each side's whole-run totals added up over the servers that reported them. */
function sumTotals(all: readonly Totals[]): Totals {
  const out: Totals = {};
  for (const t of all) {
    for (const [k, v] of Object.entries(t) as [keyof Totals, number | undefined][]) {
      if (v !== undefined) out[k] = (out[k] ?? 0) + v;
    }
  }
  return out;
}
