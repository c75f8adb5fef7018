import { describe, expect, test } from "bun:test";
import { readFixture } from "../../tests/fixtures/ntttcp/capture.ts";
import { linuxThroughput } from "./figures.ts";
import { linuxJson } from "./linux-json.ts";
import { linuxLogLine, linuxResultMessages } from "./linux-console.ts";
import { linuxXml } from "./linux-xml.ts";
import { parseCommand } from "./parse.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { NtttcpResults } from "./results.ts";
import { xmlLeaves } from "./xml-tree.ts";

/**
 * Rebuilds what the real ntttcp-for-linux measured from its own printed figures (console block + its XML/JSON file),
 * renders it with our formatters and compares with what it printed. Timestamps are stripped from console lines.
 */

const strip = (l: string) => l.replace(/^\d\d:\d\d:\d\d /, "");
function section(file: string, title: string): string[] {
  const text = readFixture(file);
  const start = text.indexOf(title);
  if (start < 0) throw new Error(`${title} not in ${file}`);
  const from = text.indexOf("\n", start) + 1;
  const end = text.indexOf("\n===", from);
  return text.slice(from, end < 0 ? undefined : end).split("\n");
}
/** The results block: from the per-thread header (or "connections tested"/Totals) to "cpu busy"/"tcpi rtt". */
function resultBlock(lines: string[]): string[] {
  const s = lines.map(strip);
  const first = s.findIndex((l) => l === "INFO: \tThread\tTime(s)\tThroughput" || / connections tested$/.test(l) || l === "INFO: #####  Totals:  #####");
  const last = s.findLastIndex((l) => l.startsWith("INFO: cpu busy (all)") || l.startsWith("INFO: tcpi rtt"));
  return s.slice(first, last + 1);
}
const field = (block: string[], label: string): string | undefined =>
  block.find((l) => l.startsWith(`INFO: ${label}`))?.slice(`INFO: ${label}`.length).replace(/^\t*:/, "");
const num = (s: string | undefined) => (s === undefined ? undefined : parseFloat(s));

function fileBody(file: string): string {
  const t = readFixture(file);
  return t.slice(t.indexOf("\n") + 1);
}

function resultsFrom(block: string[], file: { json?: unknown; xml?: string }, role: "sender" | "receiver", protocol: "tcp" | "udp"): NtttcpResults {
  let seconds: number;
  let threadKBps: number[] = [];
  let os: string;
  let computerName: string;
  let cpuPct = num(field(block, "cpu busy (all)"));
  if (file.json) {
    const body = Object.values(file.json as Record<string, Record<string, unknown>>)[0]!;
    // realTime has 6 decimals; total bytes / Bps (3 decimals) recovers the measured time far more precisely.
    const bps = (body.throughputs as { metric: string; value: string }[]).find((x) => x.metric === "Bps")!;
    seconds = Number(field(block, "total bytes")) / Number(bps.value);
    threadKBps = ((body.threads as { throughputs: { value: string }[] }[] | undefined) ?? []).map((t) => Number(t.throughputs[0]!.value));
    os = body.os as string;
    computerName = body.computername as string;
    cpuPct = Number((body.cpu as { value: string }).value);
  } else {
    const leaves = xmlLeaves(file.xml!);
    seconds = Number(field(block, "total bytes")) / Number(leaves.find((l) => l.attrs.metric === "Bps" && !l.path.includes("thread"))!.text);
    threadKBps = leaves.filter((l) => l.path.endsWith("thread/throughput") && l.attrs.metric === "KB/s").map((l) => Number(l.text));
    os = leaves.find((l) => l.path.endsWith("/os"))!.text;
    computerName = (/computername="([^"]*)"/.exec(file.xml!) ?? [])[1]!;
  }
  const totalBytes = Number(field(block, "total bytes"));
  const rate = (label: string) => num(field(block, `\t ${label}`))! ;
  const hasRetrans = block.includes("INFO: tcp retransmit:");
  return {
    role,
    protocol,
    seconds,
    totalBytes,
    threads: threadKBps.map((k, index) => ({ index, bytes: Math.round(k * 1000 * seconds), seconds })),
    connections: num(block.find((l) => / connections tested$/.test(l))?.replace(/^INFO: /, "")) ?? 0,
    host: {
      cpuCores: num(field(block, "cpu cores")),
      cpuMHz: num(field(block, "\t cpu speed")),
      userPct: num(field(block, "\t user")),
      systemPct: num(field(block, "\t system")),
      idlePct: num(field(block, "\t idle")),
      iowaitPct: num(field(block, "\t iowait")),
      softirqPct: num(field(block, "\t softirq")),
      processCpuPct: cpuPct,
      retransSegs: num(field(block, "\t retrans segs")) ?? 0,
      // The real tool writes 0 for what it did not collect; feed 0 so the files compare byte for byte.
      nicTxPackets: num(field(block, "\t tx_packets")) ?? 0,
      nicRxPackets: num(field(block, "\t rx_packets")) ?? 0,
      interrupts: num(field(block, "\t total")) ?? 0,
      tcpRttUs: num(field(block, "tcpi rtt")),
      tcpRetrans: hasRetrans
        ? {
            retransSegsPerSec: rate("retrans_segments/sec"),
            lostRetransPerSec: rate("lost_retrans/sec"),
            synRetransPerSec: rate("syn_retrans/sec"),
            fastRetransPerSec: rate("fast_retrans/sec"),
            forwardRetransPerSec: rate("forward_retrans/sec"),
            slowStartRetransPerSec: rate("slowStart_retrans/sec"),
            retransFailPerSec: rate("retrans_fail/sec"),
          }
        : undefined,
    },
    computerName,
    os,
  };
}

function planOf(cmd: string): NtttcpPlan {
  const r = parseCommand(cmd.trim().split(/\s+/), { cpus: 2 });
  if (r.kind !== "run") throw new Error("help");
  return r.plan;
}

/** cycles/byte is computed by the real tool from an unrounded idle share; ours from the printed 2-decimal one. */
function sameExceptCycles(ours: string, real: string): void {
  const mask = (s: string) => s.replace(/("cycles\/byte",\s*"value" : ")[\d.]+/, "$1#").replace(/(cycles_per_byte metric="cycles\/byte">)[\d.]+/, "$1#");
  expect(mask(ours)).toBe(mask(real));
  const c = (s: string) => Number(/(?:"cycles\/byte",\s*"value" : "|cycles_per_byte metric="cycles\/byte">)([\d.]+)/.exec(s)?.[1]);
  expect(Math.abs(c(ours) - c(real))).toBeLessThanOrEqual(0.011);
}

const CASES = [
  {
    name: "Run A receiver (-V, sync, TCP)",
    console: ["ntttcp-linux-console-tcp-sync.txt", "=== Run A receiver stdout"],
    cmd: "-r127.0.0.1 -P 2 -p 21001 -t 3 -V -x recv.xml -j recv.json -O recv.log",
    json: "ntttcp-linux-output-verbose-receiver.json.txt",
    xml: "ntttcp-linux-output-verbose-receiver.xml.txt",
    role: "receiver",
  },
  {
    name: "Run A sender (-V, sync, TCP)",
    console: ["ntttcp-linux-console-tcp-sync.txt", "=== Run A sender stdout"],
    cmd: "-s127.0.0.1 -P 2 -n 1 -p 21001 -t 3 -V -x send.xml -j send.json -O send.log",
    json: "ntttcp-linux-output-verbose-sender.json.txt",
    xml: "ntttcp-linux-output-verbose-sender.xml.txt",
    role: "sender",
  },
  {
    name: "Run L1 receiver (default verbosity)",
    console: ["ntttcp-linux-console-tcp-sync.txt", "=== Run L1 receiver stdout"],
    cmd: "-r127.0.0.1 -P 2 -p 21011 -t 3 -x recv.xml -j recv.json",
    json: "ntttcp-linux-output-default-receiver.json.txt",
    role: "receiver",
  },
  {
    name: "Run L1 sender (default verbosity)",
    console: ["ntttcp-linux-console-tcp-sync.txt", "=== Run L1 sender stdout"],
    cmd: "-s127.0.0.1 -P 2 -n 1 -p 21011 -t 3 -x send.xml -j send.json",
    xml: "ntttcp-linux-output-default-sender.xml.txt",
    role: "sender",
  },
] as const;

describe("Linux outputs rebuilt from the real tool's figures", () => {
  for (const c of CASES) {
    const block = resultBlock(section(c.console[0], c.console[1]));
    const plan = planOf(c.cmd);
    const file = "json" in c ? { json: JSON.parse(fileBody(c.json)) } : { xml: fileBody(c.xml) };
    const results = resultsFrom(block, file, c.role, "tcp");
    const opts = { verbose: plan.outputs.verbose, showTcpRetrans: false, showNicPackets: false, showDevInterrupts: false };

    test(`${c.name}: console results block`, () => {
      const ours = linuxResultMessages(results, opts).map((m) => `${m.level === "INFO" ? "INFO" : m.level}: ${m.text}`);
      expect(ours).toEqual(block);
    });
    if ("json" in c) {
      test(`${c.name}: -j file`, () => sameExceptCycles(linuxJson(plan, results, { showTcpRetrans: false }), fileBody(c.json)));
    }
    if ("xml" in c) {
      test(`${c.name}: -x file`, () => {
        const xr = resultsFrom(block, { xml: fileBody(c.xml) }, c.role, "tcp");
        sameExceptCycles(linuxXml(plan, xr, { showTcpRetrans: false }), fileBody(c.xml));
      });
    }
  }

  test("UDP sync run: no retrans line; the receiver XML matches", () => {
    const file = "ntttcp-linux-console-udp-sync.txt";
    const block = resultBlock(section(file, "=== receiver stdout"));
    const xml = section(file, "=== receiver XML").join("\n").trim() + "\n";
    const r = resultsFrom(block, { xml }, "receiver", "udp");
    const ours = linuxResultMessages(r, { verbose: true, showTcpRetrans: false, showNicPackets: false, showDevInterrupts: false });
    expect(ours.some((m) => m.text.includes("retrans segs"))).toBe(false);
    expect(ours.map((m) => `INFO: ${m.text}`)).toEqual(block);
    const plan = planOf("-r127.0.0.1 -u -P 2 -p 21101 -t 3 -V -x recv.xml -j recv.json");
    // The real receiver counts RetransSegs even for UDP; ours comes from the same snmp delta.
    sameExceptCycles(linuxXml(plan, { ...r, host: { ...r.host, retransSegs: Number(/packets_retransmitted>(\d+)/.exec(xml)![1]) } }, { showTcpRetrans: false }), xml);
  });

  test("--show-tcp-retrans / --show-nic-packets / --show-dev-interrupts blocks and files", () => {
    const file = "ntttcp-linux-output-optional-stats.txt";
    const block = resultBlock(section(file, "=== receiver stdout"));
    const xml = section(file, "=== receiver recv.xml (verbatim)").join("\n").trim() + "\n";
    const json = section(file, "=== receiver recv.json (verbatim)").join("\n").trim() + "\n";
    const plan = planOf("-r127.0.0.1 -P 1 -p 21031 -t 2 --show-tcp-retrans --show-nic-packets lo --show-dev-interrupts Local -x recv.xml -j recv.json");
    const r = resultsFrom(block, { xml }, "receiver", "tcp");
    const ours = linuxResultMessages(r, { verbose: false, showTcpRetrans: true, showNicPackets: true, showDevInterrupts: true });
    expect(ours.map((m) => `INFO: ${m.text}`)).toEqual(block);
    sameExceptCycles(linuxXml(plan, r, { showTcpRetrans: true }), xml);
    const rj = resultsFrom(block, { json: JSON.parse(json) }, "receiver", "tcp");
    sameExceptCycles(linuxJson(plan, rj, { showTcpRetrans: true }), json);
  });
});

describe("figures we cannot measure are n/a, never 0", () => {
  const plan = planOf("-s 127.0.0.1 -P 1 -n 1 -V");
  const bare: NtttcpResults = {
    role: "sender",
    protocol: "tcp",
    seconds: 2,
    totalBytes: 5e9,
    threads: [{ index: 0, bytes: 5e9, seconds: 2 }],
    connections: 1,
    host: {},
    computerName: "h",
    os: "Linux h",
  };
  test("console", () => {
    const text = linuxResultMessages(bare, { verbose: true, showTcpRetrans: true, showNicPackets: true, showDevInterrupts: true }).map((m) => m.text);
    expect(text).toContain("\t retrans segs\t:n/a");
    expect(text).toContain("\t cycles/byte\t:n/a");
    expect(text).toContain("cpu busy (all)\t:n/a");
    expect(text).toContain("tcpi rtt\t\t:n/a");
    expect(text).toContain("\t throughput\t:20.00Gbps");
  });
  test("XML and JSON parse back, with n/a where nothing was measured", () => {
    const leaves = xmlLeaves(linuxXml(plan, bare, { showTcpRetrans: false }));
    const get = (p: string) => leaves.find((l) => l.path === `ntttcps/${p}`)!.text;
    expect(get("total_bytes")).toBe("5000.000000");
    expect(get("packets_retransmitted")).toBe("n/a");
    expect(get("cpu_busy_all")).toBe("n/a");
    const json = JSON.parse(linuxJson(plan, bare, { showTcpRetrans: false }));
    expect(json.ntttcps.throughputs[1]).toEqual({ metric: "mbps", value: "20000.000" });
    expect(json.ntttcps.cycles.value).toBe("n/a");
  });
});

test("throughput text: decimal units, 2 decimals", () => {
  expect(linuxThroughput(14328179539, 3.000659)).toBe("38.20Gbps");
  expect(linuxThroughput(125, 1)).toBe("1000.00bps");
  expect(linuxThroughput(126, 1)).toBe("1.01Kbps");
  expect(linuxThroughput(0, 0)).toBe("0.00bps");
});

test("log lines: HH:MM:SS and 4-character levels", () => {
  const at = new Date(2026, 0, 1, 9, 5, 7);
  expect(linuxLogLine(at, "INFO", "x")).toBe("09:05:07 INFO: x");
  expect(linuxLogLine(at, "ERR", "x")).toBe("09:05:07 ERR : x");
  expect(linuxLogLine(at, "DBG", "x")).toBe("09:05:07 DBG : x");
});
