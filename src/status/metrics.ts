import { Phase, type StatusDocument, type TestView } from "./schema.ts";

/**
 * Prometheus text exposition (format 0.0.4) of a status document. Names carry base units as promtool's linter wants
 * them: seconds and bytes, so throughput is bytes/s (multiply by 8 for bits/s) and latency is seconds. Series
 * describe the running test, else the most recent one, so a server's figures stay readable between tests.
 */

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Record<string, string>;
export interface Sample {
  suffix?: string;
  labels: Labels;
  value: number;
}
export interface Family {
  name: string;
  type: "counter" | "gauge" | "summary";
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

/** The labels that tell concurrent tests apart; peer is left out where there is none yet. */
function testLabels(t: TestView, own: Labels): Labels {
  return { ...own, dialect: t.mode, role: t.role, test: t.id, ...(t.peer === null ? {} : { peer: t.peer }) };
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
  return s.side === undefined ? { ...base, stream: String(s.id) } : { ...base, stream: String(s.id), side: s.side };
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
      help: "Payload bytes moved by the stream since the test started.",
      samples: perStream((s) => s.bytes),
    },
    {
      name: "anyperf_packets_total",
      type: "counter",
      help: "Datagrams (UDP) or socket reads/writes (TCP) of the stream since the test started.",
      samples: perStream((s) => s.packets),
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
    fams.push({
      name: "anyperf_packets_per_second",
      type: "gauge",
      help: "Datagrams per second in the last interval, all streams.",
      samples: [{ labels: base, value: t.packetsPerSecond.current }],
    });
  }
  if (t.transactionsPerSecond) {
    fams.push(
      {
        name: "anyperf_transactions_total",
        type: "counter",
        help: "Request/response transactions of the stream since the test started.",
        samples: perStream((s) => s.transactions),
      },
      {
        name: "anyperf_transactions_per_second",
        type: "gauge",
        help: "Transactions per second in the last interval, all streams.",
        samples: [{ labels: base, value: t.transactionsPerSecond.current }],
      },
    );
  }
  const lat = t.latencyMicroseconds;
  if (lat) {
    const q = (quantile: string, us: number): Sample => ({ labels: { ...base, quantile }, value: us / 1e6 });
    fams.push({
      name: "anyperf_latency_seconds",
      type: "summary",
      help: "Transaction round-trip time over the measured window so far.",
      samples: [
        q("0.5", lat.p50),
        q("0.9", lat.p90),
        q("0.99", lat.p99),
        q("0.999", lat.p999),
        { suffix: "_sum", labels: base, value: (lat.mean * lat.count) / 1e6 },
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
  const process: Labels = { ...doc.labels, dialect: doc.mode, role: doc.role };
  const shown = doc.running.length ? doc.running : doc.test ? [doc.test] : [];
  const fams: Family[] = [
    {
      name: "anyperf_test_phase",
      type: "gauge",
      help: "1 for the phase the process is in, 0 for the others.",
      samples: Phase.options.map((p) => ({ labels: { ...process, phase: p }, value: p === doc.phase ? 1 : 0 })),
    },
    {
      name: "anyperf_process_bytes_total",
      type: "counter",
      help: "Payload bytes moved by every test of this process since it started.",
      samples: [{ labels: process, value: doc.bytesTotal }],
    },
  ];
  return renderExposition(mergeFamilies([fams, ...shown.map((t) => testFamilies(t, doc.labels))]));
}

/** The text of whole families, one per name: also what --pushgateway sends. */
export function renderExposition(fams: Family[]): string {
  return fams.map(renderFamily).join("\n") + "\n";
}
