import { Phase, type StatusDocument, type TestView } from "./schema.ts";
import { directionOf } from "./direction.ts";
import { LATENCY_BUCKETS_SECONDS } from "./latency-buckets.ts";
import { REVISION, VERSION } from "../version.ts";

/**
 * Prometheus text exposition (format 0.0.4) of a status document. Names carry base units as promtool's linter wants
 * them: seconds and bytes, so throughput is bytes/s (multiply by 8 for bits/s) and latency is seconds. Labels stay
 * bounded for a long-lived server: the peer is its address without the (ephemeral) port, and a test's series live
 * while it runs and SHOWN_AFTER_DONE_S after, so a fleet's Prometheus does not keep a series per connection.
 */

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** How long a finished test's series stay (a few scrapes at any usual interval read its final figures). */
export const SHOWN_AFTER_DONE_S = 300;

type Labels = Record<string, string>;
export interface Sample {
  suffix?: string;
  labels: Labels;
  value: number;
}
export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram";
  help: string;
  samples: Sample[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

/** One family per name, its samples from every test in order: the exposition format allows each name once. */
function mergeFamilies(groups: Family[][]): Family[] {
  const byName = new Map<string, Family>();
  for (const fams of groups) {
    for (const f of fams) {
      const seen = byName.get(f.name);
      if (seen) seen.samples.push(...f.samples);
      else byName.set(f.name, { ...f, samples: [...f.samples] });
    }
  }
  return [...byName.values()];
}

/**
 * The peer's address without its port: a client's source port is ephemeral (a new series per connection), and a
 * server's port says nothing a fleet groups by. "[::1]:5201" -> "::1", "10.0.0.2:5201" -> "10.0.0.2".
 */
export function peerAddress(peer: string): string {
  const v6 = /^\[(.*)\](?::\d+)?$/.exec(peer);
  if (v6) return v6[1]!;
  const v4 = /^([^:]*):\d+$/.exec(peer);
  return v4 ? v4[1]! : peer;
}

/**
 * The wire protocol a test spoke, one vocabulary across every series: `anyperf client`'s tests and `serve`'s native
 * tests are both "native", netserver's are "netperf"; `role` already says which end this process is.
 */
export function dialectOf(mode: string): string {
  if (mode === "client") return "native";
  return mode === "netserver" ? "netperf" : mode;
}

/** The labels that tell concurrent tests apart; peer is left out where there is none yet. */
function testLabels(t: TestView, own: Labels): Labels {
  return { ...own, dialect: dialectOf(t.mode), role: t.role, test: t.id, ...(t.peer === null ? {} : { peer: peerAddress(t.peer) }) };
}

/** The running tests, else the most recent one for SHOWN_AFTER_DONE_S after it ended. */
export function shownTests(doc: StatusDocument): TestView[] {
  if (doc.running.length) return doc.running;
  const t = doc.test;
  if (!t) return [];
  const endedMs = Date.parse(t.startedAt) + t.elapsedSeconds * 1000;
  return Date.parse(doc.now) - endedMs <= SHOWN_AFTER_DONE_S * 1000 ? [t] : [];
}

function renderFamily(f: Family): string {
  const lines = [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`];
  for (const s of f.samples) {
    const entries = Object.entries(s.labels);
    const labels = entries.length ? `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}` : "";
    lines.push(`${f.name}${s.suffix ?? ""}${labels} ${formatValue(s.value)}`);
  }
  return lines.join("\n");
}

function streamLabels(base: Labels, s: TestView["streams"][number]): Labels {
  const direction = directionOf(s.side);
  return s.side === undefined || direction === undefined ? { ...base, stream: String(s.id) } : { ...base, stream: String(s.id), side: s.side, direction };
}

function testFamilies(t: TestView, own: Labels): Family[] {
  const base = testLabels(t, own);
  const perStream = (value: (s: TestView["streams"][number]) => number): Sample[] =>
    t.streams.map((s) => ({ labels: streamLabels(base, s), value: value(s) }));
  const fams: Family[] = [
    {
      name: "anyperf_test_start_time_seconds",
      type: "gauge",
      help: "Start of the test shown, seconds since the Unix epoch.",
      samples: [{ labels: base, value: Date.parse(t.startedAt) / 1000 }],
    },
    {
      name: "anyperf_elapsed_seconds",
      type: "gauge",
      help: "Seconds since the test started.",
      samples: [{ labels: base, value: t.elapsedSeconds }],
    },
  ];
  if (t.remainingSeconds !== null) {
    fams.push({
      name: "anyperf_remaining_seconds",
      type: "gauge",
      help: "Seconds of measuring left in the plan.",
      samples: [{ labels: base, value: t.remainingSeconds }],
    });
  }
  fams.push(
    {
      name: "anyperf_bytes_total",
      type: "counter",
      help: "Payload bytes of the stream since the test started; direction: sent, received, or both (request/response).",
      samples: perStream((s) => s.bytes),
    },
    {
      name: "anyperf_throughput_bytes_per_second",
      type: "gauge",
      help: "Payload throughput of the stream in the last interval, bytes/s (x8 for bits/s).",
      samples: perStream((s) => s.bitsPerSecond / 8),
    },
    {
      name: "anyperf_average_throughput_bytes_per_second",
      type: "gauge",
      help: "Payload throughput over the measured window so far, all streams, bytes/s (x8 for bits/s).",
      samples: [{ labels: base, value: t.throughput.average / 8 }],
    },
  );
  if (t.packetsPerSecond) {
    // Datagrams are UDP's unit; a TCP test has none to count (its segments are the kernel's, not the stream's).
    fams.push({
      name: "anyperf_packets_total",
      type: "counter",
      help: "UDP datagrams of the stream since the test started (UDP tests only).",
      samples: perStream((s) => s.packets),
    });
    fams.push({
      name: "anyperf_packets_per_second",
      type: "gauge",
      help: "Datagrams per second in the last interval, all streams.",
      samples: [{ labels: base, value: t.packetsPerSecond.current }],
    });
  }
  if (t.transactionsPerSecond) {
    if (t.measuredTransactions !== undefined) {
      fams.push({
        name: "anyperf_transactions_total",
        type: "counter",
        help: "Request/response transactions over the measured window so far, of the end that reports (the client's, which anyperf_latency_seconds times).",
        samples: [{ labels: base, value: t.measuredTransactions }],
      });
    }
    fams.push(
      {
        name: "anyperf_transactions_per_second",
        type: "gauge",
        help: "Transactions per second in the last interval, all streams.",
        samples: [{ labels: base, value: t.transactionsPerSecond.current }],
      },
    );
  }
  const lat = t.latencyHistogram;
  if (lat) {
    const buckets = lat.buckets;
    fams.push({
      name: "anyperf_latency_seconds",
      type: "histogram",
      help: "Transaction round-trip time over the measured window so far (fixed buckets, 1 us to 10 s).",
      samples: [
        ...LATENCY_BUCKETS_SECONDS.map((le, i) => ({ suffix: "_bucket", labels: { ...base, le: String(le) }, value: buckets[i]! })),
        { suffix: "_bucket", labels: { ...base, le: "+Inf" }, value: lat.count },
        { suffix: "_sum", labels: base, value: lat.sumMicroseconds / 1e6 },
        { suffix: "_count", labels: base, value: lat.count },
      ],
    });
  }
  const jitter = t.streams.filter((s) => s.jitterMilliseconds !== undefined);
  if (jitter.length) {
    fams.push({
      name: "anyperf_jitter_seconds",
      type: "gauge",
      help: "Datagram arrival jitter of the stream (RFC 1889 running estimate).",
      samples: jitter.map((s) => ({ labels: streamLabels(base, s), value: s.jitterMilliseconds! / 1000 })),
    });
  }
  if (t.cpu) {
    fams.push({
      name: "anyperf_cpu_busy_ratio",
      type: "gauge",
      help: "CPU busy: scope=host is all cores (1 = all busy), scope=process is this process (1 = one core).",
      samples: [
        { labels: { ...base, scope: "host" }, value: t.cpu.busyPercent / 100 },
        { labels: { ...base, scope: "process" }, value: t.cpu.processPercent / 100 },
      ],
    });
  }
  if (t.retransmits !== undefined) {
    fams.push({
      name: "anyperf_retransmits_total",
      type: "counter",
      help: "TCP segments retransmitted by this test's own sockets over the measured window so far (TCP_INFO).",
      samples: [{ labels: base, value: t.retransmits }],
    });
  }
  if (t.lost !== undefined) {
    fams.push({
      name: "anyperf_lost_packets_total",
      type: "counter",
      help: "UDP datagrams lost since the test started, all streams.",
      samples: [{ labels: base, value: t.lost }],
    });
  }
  return fams;
}

export function renderMetrics(doc: StatusDocument): string {
  // `mode` is the command the process runs (serve, client, iperf3, ...); `dialect` is reserved for what a test spoke.
  const process: Labels = { ...doc.labels, mode: doc.mode, role: doc.role };
  const shown = shownTests(doc);
  const fams: Family[] = [
    {
      name: "anyperf_build_info",
      type: "gauge",
      help: "Always 1: the anyperf version and the git commit it was built from.",
      samples: [{ labels: { ...doc.labels, version: VERSION, revision: REVISION }, value: 1 }],
    },
    {
      name: "anyperf_tests_running",
      type: "gauge",
      help: "Tests this process runs now (a server: clients it is measuring).",
      samples: [{ labels: process, value: doc.running.length }],
    },
    {
      name: "anyperf_test_phase",
      type: "gauge",
      help: "1 for the phase the process is in, 0 for the others.",
      samples: Phase.options.map((p) => ({ labels: { ...process, phase: p }, value: p === doc.phase ? 1 : 0 })),
    },
    {
      name: "anyperf_process_bytes_total",
      type: "counter",
      help: "Payload bytes of every test of this process since it started; direction: sent, received, or both (request/response).",
      samples: (["sent", "received", "both"] as const).map((direction) => ({ labels: { ...process, direction }, value: doc.bytesByDirection[direction] })),
    },
  ];
  return renderExposition(mergeFamilies([fams, ...shown.map((t) => testFamilies(t, doc.labels))]));
}

/** The text of whole families, one per name: also what --pushgateway sends. */
export function renderExposition(fams: Family[]): string {
  return fams.map(renderFamily).join("\n") + "\n";
}
