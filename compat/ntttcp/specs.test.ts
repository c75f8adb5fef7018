import { expect, test } from "bun:test";
import { StreamSpec } from "../../src/stream-spec.ts";
import { hostFigures } from "./host-figures.ts";
import { parseCommand } from "./parse.ts";
import { receiverSpecs, senderSpecs, UDP_RECV_BUFFER } from "./specs.ts";

const plan = (s: string) => {
  const r = parseCommand(s.split(" "), { cpus: 2 });
  if (r.kind !== "run") throw new Error("help");
  return r.plan;
};

test("Linux sender -P 2 -n 3 -l 2: six streams of two sockets, 'A' payload, valid StreamSpecs", () => {
  const { specs, threadOf } = senderSpecs(plan("-s 127.0.0.1 -P 2 -n 3 -l 2 -p 28001 -B 600M"));
  const parsed = specs.map((s) => StreamSpec.parse(s));
  expect(parsed.map((s) => (s.kind === "tcp-send" ? `${s.connect!.port}x${s.connections}` : "?"))).toEqual(["28001x2", "28001x2", "28001x2", "28002x2", "28002x2", "28002x2"]);
  expect(parsed.every((s) => s.kind === "tcp-send" && s.fill === 0x41 && s.writeSize === 131072 && s.rate.bitsPerSecond === 1e8)).toBe(true);
  expect(threadOf).toEqual([0, 1, 2, 3, 4, 5]);
});

test("-f pins one source port per connection: F + k·l + i", () => {
  const { specs, threadOf } = senderSpecs(plan("-s 127.0.0.1 -P 1 -n 2 -l 2 -p 28001 -f 28100"));
  expect(specs.map((s) => (s.kind === "tcp-send" ? s.bind?.port : 0))).toEqual([28100, 28101, 28102, 28103]);
  expect(threadOf).toEqual([0, 0, 1, 1]);
});

test("UDP: Linux sends 'B' datagrams clamped to 65507, Windows 'A' of -l bytes; receivers read whole datagrams", () => {
  const lin = senderSpecs(plan("-s 127.0.0.1 -u -P 1 -n 1 -p 28001")).specs[0]!;
  expect(lin).toMatchObject({ kind: "udp-send", datagramSize: 65507, fill: 0x42, format: "none" });
  const win = senderSpecs(plan("-s -m 1,*,127.0.0.1 -u -ns -t 1 -p 28001")).specs[0]!;
  expect(win).toMatchObject({ kind: "udp-send", datagramSize: 128, fill: 0x41 });
  const rx = receiverSpecs(plan("-r 127.0.0.1 -u -P 1 -p 28001"), { sockopt: true }).specs[0]!;
  expect(rx).toMatchObject({ kind: "udp-recv", datagramSize: 65535, options: { recvBuffer: UDP_RECV_BUFFER } });
  expect(receiverSpecs(plan("-r 127.0.0.1 -u -P 1 -p 28001")).specs[0]!).toMatchObject({ options: {} });
});

test("receivers: Linux ports take any number of connections, Windows threads exactly one", () => {
  expect(receiverSpecs(plan("-r 127.0.0.1 -P 2 -p 28001")).specs.map((s) => s.kind === "tcp-recv" && s.connections)).toEqual([0, 0]);
  expect(receiverSpecs(plan("-r -m 2,*,127.0.0.1 -ns -t 1 -p 28001")).specs.map((s) => s.kind === "tcp-recv" && s.connections)).toEqual([1, 1]);
});

test("Windows count mode: each sender thread stops after -n × -l bytes", () => {
  const { specs } = senderSpecs(plan("--windows -s -m 2,*,127.0.0.1 -ns -n 100 -l 1k -p 28001"));
  expect(specs.map((s) => s.limitBytes)).toEqual([102400, 102400]);
});

test("Windows count mode: each receiver thread stops after -n reads (time mode: none)", () => {
  const limits = (argv: string) => receiverSpecs(plan(argv)).specs.map((s) => s.limitPackets);
  expect(limits("--windows -r -m 2,*,127.0.0.1 -ns -n 100 -l 1k -p 28001")).toEqual([100, 100]);
  expect(limits("--windows -r -m 2,*,127.0.0.1 -ns -t 1 -p 28001")).toEqual([0, 0]);
});

test("host window → ntttcp figures; absent counters stay absent", () => {
  const w = {
    seconds: 2,
    cores: 2,
    cpu: { user: 10, system: 20, idle: 60, iowait: 1, softirq: 9 },
    process: { total: 55, user: 5, system: 50 },
    mhzFirst: 2600,
    tcp: { retransSegs: 4, inSegs: 100, outSegs: 200, attemptFails: 1 },
    tcpExt: { lostRetransmit: 0, synRetrans: 0, fastRetrans: 2, forwardRetrans: 0, slowStartRetrans: 0, retransFail: 0 },
    nics: { lo: { txPackets: 7, rxPackets: 8 } },
    interrupts: { total: 1000, lines: [{ id: "LOC", description: "Local timer interrupts", count: 600 }, { id: "30", description: "virtio0-input", count: 400 }] },
  };
  const f = hostFigures(w, { protocol: "tcp", nic: "lo", interruptsMatching: "Local timer" });
  expect(f).toMatchObject({ cpuCores: 2, cpuMHz: 2600, userPct: 10, idlePct: 60, processCpuPct: 55, retransSegs: 4, segmentsIn: 100, segmentsOut: 200, errors: 1, nicTxPackets: 7, nicRxPackets: 8, interrupts: 600 });
  expect(f.tcpRetrans).toMatchObject({ retransSegsPerSec: 2, fastRetransPerSec: 1 });
  expect(hostFigures(w, { protocol: "tcp" }).interrupts).toBeUndefined();
  expect(hostFigures(w, { protocol: "tcp", allInterrupts: true }).interrupts).toBe(1000);
  expect(hostFigures({ seconds: 2 }, { protocol: "udp" })).toEqual({
    cpuCores: undefined, cpuMHz: undefined, userPct: undefined, systemPct: undefined, idlePct: undefined, iowaitPct: undefined, softirqPct: undefined,
    processCpuPct: undefined, retransSegs: undefined, segmentsOut: undefined, segmentsIn: undefined, errors: undefined, tcpRetrans: undefined,
    nicTxPackets: undefined, nicRxPackets: undefined, interrupts: undefined,
  });
});

test("--show-tcp-retrans: a TcpExt counter this kernel lacks (TCPForwardRetrans) reads 0, as 1.4.3 reads it; the other rates stay", () => {
  const w = {
    seconds: 2,
    tcp: { retransSegs: 4, inSegs: 100, outSegs: 200, attemptFails: 1 },
    tcpExt: { lostRetransmit: 2, synRetrans: 0, fastRetrans: 6, slowStartRetrans: 0, retransFail: 0 },
  };
  expect(hostFigures(w, { protocol: "tcp" }).tcpRetrans).toEqual({
    retransSegsPerSec: 2, lostRetransPerSec: 1, synRetransPerSec: 0, fastRetransPerSec: 3, forwardRetransPerSec: 0, slowStartRetransPerSec: 0, retransFailPerSec: 0,
  });
});

test("-m CPU: every stream of a mapping runs on that CPU's Worker; '*' leaves streams unpinned", () => {
  const win = senderSpecs(plan("-s -m 2,1,127.0.0.1 1,*,127.0.0.1 -ns -t 1 -p 28001")).specs;
  expect(win.map((s) => s.cpu)).toEqual([1, 1, undefined]);
  const lin = receiverSpecs(plan("-r -m 3,0,127.0.0.1 -P 3 -t 1 -p 28001")).specs;
  expect(lin.map((s) => s.cpu)).toEqual([0, 0, 0]);
  expect(senderSpecs(plan("-s -m 4,*,127.0.0.1 -p 28001")).specs.every((s) => s.cpu === undefined)).toBe(true);
});
