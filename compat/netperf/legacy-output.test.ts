import { describe, expect, test } from "bun:test";
import { consoleRuns, type ConsoleRun } from "../../tests/fixtures/netperf/load.ts";
import { defaultFormat, formatUnits, type Figures } from "./figures.ts";
import { legacyBody, topHeader, type LegacyInput } from "./legacy-output.ts";
import { parseNetperfArgs } from "./netperf-args.ts";
import type { NetperfPlan } from "./plan.ts";

/**
 * Stock netperf's console output (recorded on this machine, tests/fixtures/netperf/stock-console-*.txt) rebuilt
 * from the numbers it printed: the layout, widths, titles and trailing blanks must come out byte for byte.
 */

const numbers = (line: string) => (line.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);

function planOf(run: ConsoleRun): NetperfPlan {
  const cmd = parseNetperfArgs(run.argv);
  if (cmd.kind !== "run") throw new Error("not a run");
  return cmd.plan;
}

function baseFigures(plan: NetperfPlan): Figures {
  const libfmt = defaultFormat(plan.test, plan.format);
  const cpu = { util: 0, user: 0, system: 0, iowait: 0, irq: 0, softirq: 0, peakUtil: 0, peakId: 0, method: 8, numCpus: 2 };
  return {
    libfmt,
    unitsText: formatUnits(libfmt),
    elapsed: 0,
    thruput: 0,
    transactionRate: 0,
    rttLatency: 0,
    localSendThruput: 0,
    localRecvThruput: 0,
    remoteSendThruput: 0,
    remoteRecvThruput: 0,
    bytesSent: 0,
    bytesReceived: 0,
    bytesXferd: 0,
    remoteBytesSent: 0,
    remoteBytesReceived: 0,
    remoteBytesXferd: 0,
    bytesPerSend: 0,
    bytesPerRecv: 0,
    remoteBytesPerSend: 0,
    remoteBytesPerRecv: 0,
    localCpuUtil: -1,
    remoteCpuUtil: -1,
    localSd: -1,
    remoteSd: -1,
    localCpuMethod: plan.localCpu ? "S" : "U",
    remoteCpuMethod: plan.remoteCpu ? "S" : "U",
    localCpu: plan.localCpu ? cpu : undefined,
    remoteCpu: cpu,
    remoteCpuMeasured: plan.remoteCpu,
    sdUnits: libfmt === "x" ? "usec/Tran" : "usec/KB",
    latency: undefined,
  };
}

/** Rebuilds what legacyBody needs from the value lines stock netperf printed. */
function inputsFrom(plan: NetperfPlan, body: string): LegacyInput {
  const f = baseFigures(plan);
  const i: LegacyInput = {
    test: plan.test,
    f,
    printHeaders: plan.printHeaders,
    verbosity: plan.verbosity,
    brand: plan.brand,
    localCpu: plan.localCpu,
    remoteCpu: plan.remoteCpu,
    lss: 0,
    lsr: 0,
    rss: 0,
    rsr: 0,
    sendSize: 0,
    remoteSendSize: 0,
    requestSize: 0,
    responseSize: 0,
    localSendCalls: 1,
    localRecvCalls: 1,
    failedSends: 0,
    remoteRecvCalls: 1,
    remoteSendCalls: 1,
    localAlign: plan.align.local,
    remoteAlign: plan.align.remote,
    localOffset: plan.offset.local,
    remoteOffset: plan.offset.remote,
    transportMss: 0,
    firstBurst: plan.firstBurst,
  };
  // Value lines start with a digit or a blank then a digit; titles do not.
  const lines = body.split("\n").filter((l) => /^\s*-?\d/.test(l));
  const cpu = plan.localCpu || plan.remoteCpu;
  const setCpu = (v: number[], at: number) => {
    [f.localCpuUtil, f.remoteCpuUtil, f.localSd, f.remoteSd] = v.slice(at, at + 4) as [number, number, number, number];
  };
  if (plan.verbosity === 0) {
    const [v] = numbers(lines[0]!);
    if (cpu) (f.localSd = v!), (f.remoteSd = v!);
    else (f.thruput = v!), (f.localSendThruput = v!);
    return i;
  }
  const v = numbers(lines[0]!);
  switch (plan.test) {
    case "TCP_STREAM":
    case "TCP_MAERTS": {
      if (plan.test === "TCP_STREAM" || cpu) [i.rsr, i.lss, i.sendSize] = v as [number, number, number];
      else [i.lsr, i.rss, i.remoteSendSize] = v as [number, number, number];
      i.remoteSendSize = i.remoteSendSize || i.sendSize;
      f.elapsed = v[3]!;
      f.thruput = v[4]!;
      if (cpu) setCpu(v, 5);
      if (plan.verbosity > 1) {
        const x = numbers(lines[1]!);
        const [, , , , bytes, , calls, , rcalls] = x as number[];
        i.localSendCalls = i.localRecvCalls = calls!;
        i.remoteRecvCalls = i.remoteSendCalls = rcalls!;
        f.bytesSent = f.bytesReceived = bytes!;
        f.remoteBytesSent = (x[7]! * rcalls!) as number;
        i.transportMss = numbers(lines[2]!)[0]!;
      }
      return i;
    }
    case "UDP_STREAM": {
      const w = numbers(lines[1]!);
      [i.lss, i.sendSize, f.elapsed, i.localSendCalls, i.failedSends, f.localSendThruput] = v as [number, number, number, number, number, number];
      [i.rsr, , i.remoteRecvCalls, f.remoteRecvThruput] = w as [number, number, number, number];
      if (cpu) [f.localCpuUtil, f.localSd, f.remoteCpuUtil, f.remoteSd] = [v[6]!, v[7]!, w[4]!, w[5]!];
      return i;
    }
    default: {
      const w = numbers(lines[1]!);
      [i.lss, i.lsr, i.requestSize, i.responseSize, f.elapsed, f.thruput] = v as [number, number, number, number, number, number];
      [i.rss, i.rsr] = w as [number, number];
      if (cpu) setCpu(v, 6);
      if (plan.verbosity > 1 && plan.test === "TCP_RR") f.transactionRate = numbers(lines[2]!)[5]!;
      return i;
    }
  }
}

function header(plan: NetperfPlan): string {
  return topHeader({
    test: plan.test,
    localName: "0.0.0.0",
    localAddress: "0.0.0.0",
    localPort: plan.localDataPort,
    localFamily: "ipv4",
    remoteName: plan.host,
    remoteAddress: plan.host,
    remotePort: plan.remoteDataPort,
    remoteFamily: "ipv4",
    iterationMax: plan.iterationMax,
    confidenceInterval: plan.confidenceInterval,
    confidenceLevel: plan.confidenceLevel,
    noDelay: plan.noDelay,
    copyAvoidance: false,
    firstBurst: plan.firstBurst,
    cpuBind: false,
  });
}

describe("legacy console output matches stock netperf", () => {
  const runs = [...consoleRuns("stock-console-legacy.txt"), ...consoleRuns("stock-console-legacy-variants.txt")];
  const legacyOmni = consoleRuns("stock-console-omni.txt").filter((r) => !r.argv.some((a) => ["-o", "-O", "-k"].includes(a)));
  for (const run of [...runs, ...legacyOmni]) {
    test(run.argv.join(" "), () => {
      const plan = planOf(run);
      const top = plan.printHeaders ? header(plan) : "";
      const body = run.output.slice(top.length);
      if (plan.printHeaders) expect(run.output.slice(0, top.length)).toBe(top);
      expect(legacyBody(inputsFrom(plan, body))).toBe(body);
    });
  }

  test("captured header suffixes: nodelay, confidence, CRR without first burst", () => {
    const plan = planOf({ argv: "-H 127.0.0.1 -p 22865 -l -5000 -t TCP_RR -- -r 32,1024 -P 22240,22241 -D".split(" "), output: "", exitCode: 0 });
    expect(header(plan)).toBe(
      "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 22240 AF_INET to 127.0.0.1 () port 22241 AF_INET : nodelay : demo : first burst 0\n",
    );
    const confid = planOf({ argv: "-H 127.0.0.1 -p 22865 -l 1 -i 3,3 -t TCP_RR -- -P 22270,22271".split(" "), output: "", exitCode: 0 });
    expect(header(confid)).toBe(
      "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 22270 AF_INET to 127.0.0.1 () port 22271 AF_INET : +/-2.500% @ 99% conf.  : demo : first burst 0\n",
    );
  });
});
