import { describe, expect, test } from "bun:test";
import { readFixture } from "../../tests/fixtures/ntttcp/capture.ts";
import { windowsRecording } from "../../tests/fixtures/ntttcp/windows-real.ts";
import { linuxFigures, windowsFigures } from "./figures.ts";
import type { NtttcpResults } from "./results.ts";

/**
 * The figures each formatter prints, fed what the real tools measured (read back from their own output) and compared
 * with what they printed. Inputs a tool prints rounded are rebuilt from a figure printed with more digits.
 */

/** The text of the element `<name metric="...">` at the given depth (1 = the totals, 2 = a thread). */
function leaf(xml: string, name: string, metric: string | undefined, depth = 1): string {
  const m = new RegExp(`^${"\\t".repeat(depth)}<${name}${metric ? ` metric="${metric}"` : ""}>([-\\d.]+)<`, "m").exec(xml);
  if (!m) throw new Error(`<${name} ${metric ?? ""}> not in the capture`);
  return m[1]!;
}

describe("NTttcp for Windows 5.40 (real, under Wine): ntttcp.exe -r -m 1,*,127.0.0.1 -ns -n 5000 -xml", () => {
  const xml = windowsRecording("windows-5.40-count-xml-receiver.xml.txt").body;
  // 312.346191 MiB pins the byte count to one integer; Bps (one decimal) pins the time.
  const bytes = Math.round(Number(leaf(xml, "total_bytes", "MB")) * 1048576);
  const seconds = bytes / Number(leaf(xml, "throughput", "Bps"));
  const results = (cpuMHz: number): NtttcpResults => ({
    role: "receiver",
    protocol: "tcp",
    seconds,
    // 5000 completed reads: the capture's Avg B / Compl is bytes / 5000 to the last printed digit.
    threads: [{ index: 0, bytes, ios: 5000, seconds }],
    totalBytes: bytes,
    connections: 0,
    host: {
      segmentsOut: Number(leaf(xml, "packets_sent", undefined)),
      segmentsIn: Number(leaf(xml, "packets_received", undefined)),
      idlePct: 100 - Number(leaf(xml, "cpu", "%")),
      cpuCores: Number(leaf(xml, "num_processors", undefined)),
      cpuMHz,
    },
    computerName: "VM",
    os: "Windows",
  });
  // Wine answers ~MHz with the host's whole MHz (its /proc/cpuinfo says 2596.096).
  const f = windowsFigures(results(2596), Number(leaf(xml, "bufferLen", undefined)));

  test("totals as the -xml file prints them", () => {
    expect(f.totalMB.toFixed(6)).toBe(leaf(xml, "total_bytes", "MB"));
    expect(f.MBps.toFixed(3)).toBe(leaf(xml, "throughput", "MB/s"));
    expect(f.mbps.toFixed(3)).toBe(leaf(xml, "throughput", "mbps"));
    expect(f.Bps.toFixed(1)).toBe(leaf(xml, "throughput", "Bps"));
    expect(f.avgFrameSize!.toFixed(3)).toBe(leaf(xml, "avg_frame_size", "B"));
    expect(f.buffers.toFixed(3)).toBe(leaf(xml, "total_buffers", undefined));
    expect(f.buffersPerSec.toFixed(3)).toBe(leaf(xml, "throughput", "buffers/s"));
    expect(f.avgCpu!.toFixed(3)).toBe(leaf(xml, "cpu", "%"));
    expect(f.cyclesPerByte!.toFixed(3)).toBe(leaf(xml, "cycles", "cycles/byte"));
    expect(f.avgBytesPerCompl!.toFixed(3)).toBe(leaf(xml, "avg_bytes_per_compl", "B"));
    expect(f.threadsAvgBytesPerCompl!.toFixed(3)).toBe(leaf(xml, "threads_avg_bytes_per_compl", "B"));
  });

  test("the thread's figures, divided by the test time", () => {
    const t = f.thread(bytes, seconds, 5000);
    expect(t.KBps.toFixed(3)).toBe(leaf(xml, "throughput", "KB/s", 2));
    expect(t.MBps.toFixed(3)).toBe(leaf(xml, "throughput", "MB/s", 2));
    expect(t.mbps.toFixed(3)).toBe(leaf(xml, "throughput", "mbps", 2));
    expect(t.Bps.toFixed(1)).toBe(leaf(xml, "throughput", "Bps", 2));
    expect(t.avgBytesPerCompl!.toFixed(3)).toBe(leaf(xml, "avg_bytes_per_compl", "B", 2));
  });

  test("a CPU above 4294 MHz: MHz · 10⁶ wraps in 32 bits, as in NTttcp", () => {
    const at = (mhz: number) => windowsFigures(results(mhz), 65536).cyclesPerByte!;
    // 5000e6 wraps to 5000e6 − 2³² = 705032704 Hz: the printed 8.481 at 2596e6 Hz scales to 8.481 · 705032704 / 2596e6.
    expect(at(5000).toFixed(3)).toBe("2.303");
    // 4294 MHz still fits; 4295 MHz wraps to 32704 Hz, next to nothing.
    expect(at(4294).toFixed(3)).toBe("14.028");
    expect(at(4295).toFixed(6)).toBe("0.000107");
  });
});

describe("ntttcp-for-linux 1.4.3: -r --show-tcp-retrans --show-nic-packets lo --show-dev-interrupts", () => {
  const text = readFixture("ntttcp-linux-output-optional-stats.txt");
  const consoleText = text.slice(text.indexOf("=== receiver stdout"), text.indexOf("=== sender stdout"));
  const field = (label: string) => new RegExp(`INFO: \\t? ?${label}\\t+:([\\d.]+)`).exec(consoleText)![1]!;
  const xml = text.slice(text.indexOf("<ntttcpr"));
  const bytes = Number(field("total bytes"));
  const seconds = bytes / Number(leaf(xml, "throughput", "Bps"));
  const f = linuxFigures({
    role: "receiver",
    protocol: "tcp",
    seconds,
    threads: [],
    totalBytes: bytes,
    connections: 0,
    host: {
      cpuCores: Number(field("cpu cores")),
      cpuMHz: Number(field("cpu speed")),
      idlePct: Number(field("idle")),
      interrupts: Number(field("total")),
      nicTxPackets: Number(field("tx_packets")),
      nicRxPackets: Number(field("rx_packets")),
    },
    computerName: "h",
    os: "Linux",
  });

  test("totals, interrupts and cycles/byte as the console and the -x file print them", () => {
    expect(f.totalMB.toFixed(6)).toBe(leaf(xml, "total_bytes", "MB"));
    expect(f.MBps.toFixed(3)).toBe(leaf(xml, "throughput", "MB/s"));
    expect(f.mbps.toFixed(3)).toBe(leaf(xml, "throughput", "mbps"));
    expect(f.Bps.toFixed(3)).toBe(leaf(xml, "throughput", "Bps"));
    expect(f.interruptsPerSec!.toFixed(3)).toBe(field("interrupts/sec"));
    expect(f.packetsPerInterrupt!.toFixed(3)).toBe(leaf(xml, "avg_packets_per_interrupt", "packets/interrupt"));
    expect(f.packetsPerInterrupt!.toFixed(2)).toBe(field("pkts/interrupt"));
    // idle is printed with 2 decimals, which moves cycles/byte by less than its last printed digit here.
    expect(f.cyclesPerByte!.toFixed(2)).toBe(field("cycles/byte"));
  });
});
