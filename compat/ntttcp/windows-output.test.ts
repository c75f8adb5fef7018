import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCommand } from "./parse.ts";
import type { NtttcpResults } from "./results.ts";
import { windowsConsole, windowsFlagDump, windowsTimestamp, windowsXml } from "./windows-output.ts";
import { xmlLeaves } from "./xml-tree.ts";

/**
 * Windows 5.40 layout from docs/protocols/ntttcp-windows.md §6/§7 (no Windows capture exists; the spec's example is the
 * reference).
 */

const cmd = parseCommand("-r -m 2,*,10.0.0.5 -t 10 -ns".split(" "), { cpus: 2 });
if (cmd.kind !== "run" || !cmd.windows) throw new Error("parse");
const plan = cmd.plan;

// The spec's example: 11702.25 MiB in 10.002 s on 2 threads with 64 KiB buffers.
const B = 11702.25 * 1048576;
const results: NtttcpResults = {
  role: "receiver",
  protocol: "tcp",
  seconds: 10.002,
  threads: [
    { index: 0, bytes: B / 2, ios: B / 2 / 65536, seconds: 10.002 },
    { index: 1, bytes: B / 2, ios: B / 2 / 61440.5, seconds: 10.002 },
  ],
  totalBytes: B,
  connections: 0,
  host: { segmentsOut: 693310, segmentsIn: 1372280, retransSegs: 0, errors: 0, idlePct: 100 - 18.412, interrupts: 200149, dpcs: 400298, cpuCores: 2, cpuMHz: 2600 },
  computerName: "h",
  os: "Linux",
};

describe("Windows console tables", () => {
  const text = windowsConsole(plan, results);
  const lines = text.split("\n");
  test("headers, rules and the blank lines between tables are the 5.40 ones", () => {
    const at = (s: string) => lines.indexOf(s);
    expect(lines.slice(0, 2)).toEqual(["", ""]);
    expect(lines[2]).toBe("Thread  Time(s) Throughput(KB/s) Avg B / Compl");
    expect(lines[3]).toBe("======  ======= ================ =============");
    expect(lines[at("#####  Totals:  #####") - 1]).toBe("");
    expect(lines[at("   Bytes(MEG)    realtime(s) Avg Frame Size Throughput(MB/s)") + 1]).toBe("================ =========== ============== ================");
    expect(lines[at("Throughput(Buffers/s) Cycles/Byte       Buffers") + 1]).toBe("===================== =========== =============");
    expect(lines[at("DPCs(count/s) Pkts(num/DPC)   Intr(count/s) Pkts(num/intr)") + 1]).toBe("============= ============= =============== ==============");
    expect(lines[at("Packets Sent Packets Received Retransmits Errors Avg. CPU %") + 1]).toBe("============ ================ =========== ====== ==========");
  });
  test("rows: widths of the spec, MiB-based figures", () => {
    const row = (header: string) => lines[lines.indexOf(header) + 2]!;
    // 6135347200 B / 10.002 s / 1024 = 599035.393 KiB/s.
    expect(lines[4]).toBe("     0   10.002       599035.393     65536.000");
    expect(row("   Bytes(MEG)    realtime(s) Avg Frame Size Throughput(MB/s)")).toBe("    11702.250000      10.002       8941.833         1169.991");
    // Cycles/Byte = 18.412 % · 2 processors · 2600e6 Hz / (12270694400 B / 10.002 s) = 0.780.
    expect(row("Throughput(Buffers/s) Cycles/Byte       Buffers")).toBe("            18719.856       0.780    187236.000");
    // DPCs are Linux's softirqs: 400298 / 10.002 s; 1372280 packets received / 400298. 200149 interrupts / 10.002 s;
    // 1372280 / 200149.
    expect(row("DPCs(count/s) Pkts(num/DPC)   Intr(count/s) Pkts(num/intr)")).toBe("    40021.796         3.428       20010.898          6.856");
    expect(row("Packets Sent Packets Received Retransmits Errors Avg. CPU %")).toBe("      693310          1372280           0      0     18.412");
  });
  test("a CPU above 4294 MHz: Cycles/Byte wraps MHz · 10⁶ in 32 bits as 5.40 does", () => {
    const fast = windowsConsole(plan, { ...results, host: { ...results.host, cpuMHz: 5000 } }).split("\n");
    // 5000e6 Hz wraps to 5000e6 − 2³² = 705032704: 18.412 % · 2 · 705032704 / (12270694400 B / 10.002 s) = 0.212
    // (1.501 without the wrap).
    expect(fast[fast.indexOf("Throughput(Buffers/s) Cycles/Byte       Buffers") + 2]).toBe("            18719.856       0.212    187236.000");
  });
  test("-hpt hides the thread table", () => {
    const c = parseCommand("-r -m 2,*,10.0.0.5 -t 10 -ns -hpt".split(" "), { cpus: 2 });
    if (c.kind !== "run") throw new Error("parse");
    expect(windowsConsole(c.plan, results)).not.toContain("Thread  Time(s)");
  });
});

describe("Windows XML", () => {
  const leaves = xmlLeaves(windowsXml(plan, cmd.windows!, results));
  test("element order of 5.40 and its units (ms times, boolean sync_port, port = base + T)", () => {
    const top = leaves.filter((l) => !l.path.includes("/parameters/") && !l.path.includes("/thread/")).map((l) => l.path.replace("ntttcpr/", ""));
    expect(top).toEqual([
      "total_bytes", "realtime", "avg_bytes_per_compl", "threads_avg_bytes_per_compl", "avg_frame_size", "throughput", "throughput", "throughput",
      "total_buffers", "throughput", "avg_packets_per_interrupt", "interrupts", "dpcs", "avg_packets_per_dpc", "cycles", "packets_sent",
      "packets_received", "packets_retransmitted", "errors", "cpu", "num_processors", "bufferCount", "bufferLen", "io",
    ]);
    const p = (n: string) => leaves.find((l) => l.path === `ntttcpr/parameters/${n}`)!.text;
    expect([p("port"), p("sync_port"), p("no_sync"), p("run_time"), p("recv_socket_buff")]).toEqual(["5003", "False", "True", "10000", "-1"]);
    expect(leaves.find((l) => l.path === "ntttcpr/total_bytes")!.text).toBe("11702.250000");
    expect(leaves.find((l) => l.path === "ntttcpr/bufferCount")!.text).toBe("9223372036854775807");
    // Numbers where 5.40 has numbers (a parser reads them as such): DPCs are the softirqs.
    expect(leaves.find((l) => l.path === "ntttcpr/dpcs")!.text).toBe("40021.796");
    expect(leaves.find((l) => l.path === "ntttcpr/avg_packets_per_dpc")!.text).toBe("3.428");
  });
  test("max_active_threads: the thread count, or -icp's value (5.40's IOCP concurrency)", () => {
    const at = (argv: string) => {
      const c = parseCommand(argv.split(" "), { cpus: 2 });
      if (c.kind !== "run" || !c.windows) throw new Error("parse");
      return xmlLeaves(windowsXml(c.plan, c.windows, results)).find((l) => l.path === "ntttcpr/parameters/max_active_threads")!.text;
    };
    expect(at("-r -m 2,*,10.0.0.5 -t 10 -ns")).toBe("2");
    expect(at("-r -m 2,*,10.0.0.5 -t 10 -ns -icp 3")).toBe("3");
  });
  test("CRLF line ends, as 5.40 writes its file in text mode", () => {
    const xml = windowsXml(plan, cmd.windows!, results);
    expect(xml.endsWith("</ntttcpr>\r\n")).toBe(true);
    expect(xml.replace(/\r\n/g, "")).not.toContain("\n");
  });
  test("per-thread throughput is divided by the test time, Bps with one decimal", () => {
    const bps = leaves.filter((l) => l.path === "ntttcpr/thread/throughput" && l.attrs.metric === "Bps").map((l) => l.text);
    // 6135347200 B / 10.002 s each.
    expect(bps).toEqual(["613412242.4", "613412242.4"]);
  });
});

describe("-v", () => {
  test("the flag dump is the real 5.40's for the same command (tests/fixtures/ntttcp/windows-5.40-verbose-sender.txt)", () => {
    const text = readFileSync(join(import.meta.dir, "../../tests/fixtures/ntttcp/windows-5.40-verbose-sender.txt"), "utf8");
    const lines = text.split("\n").slice(1).map((l) => l.replace(/\r$/, ""));
    const real = lines.slice(1, lines.findIndex((l) => /^\d+\/\d+\/\d+ /.test(l)));
    const v = parseCommand("-s -m 1,*,127.0.0.1 -ns -t 1 -p 36601 -v".split(" "), { cpus: 2 });
    if (v.kind !== "run" || !v.windows) throw new Error("parse");
    expect(windowsFlagDump(v.plan, v.windows)).toEqual(real);
  });

  test("messages are stamped as 5.40 stamps them: month/day/year hour:minute:second, no padding", () => {
    expect(windowsTimestamp(new Date(2026, 11, 4, 7, 5, 3))).toBe("12/4/2026 7:5:3 ");
  });
});
