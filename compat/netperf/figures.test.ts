import { describe, expect, test } from "bun:test";
import { decodeOmniResponse, encodeOmniResponse } from "../../interop/netperf/omni-response.ts";
import { decodeOmniResults, encodeOmniResults } from "../../interop/netperf/omni-results.ts";
import { calcThruput, computeFigures, defaultFormat, serviceDemand, type FigureInputs } from "./figures.ts";
import { sprintf } from "./printf.ts";

const sockets = { sendRequested: -1, recvRequested: -1, send: 16384, recv: 131072, sendEnd: 16384, recvEnd: 131072 };

function inputs(over: Partial<FigureInputs>): FigureInputs {
  return {
    test: "TCP_RR",
    format: undefined,
    firstBurst: 0,
    local: { elapsedS: 2, bytesSent: 0, bytesReceived: 0, sendCalls: 0, recvCalls: 0, failedSends: 0, transactions: 0 },
    localSendSize: 0,
    localRecvSize: 0,
    sockets,
    response: decodeOmniResponse(encodeOmniResponse({})),
    results: decodeOmniResults(encodeOmniResults({})),
    localCpu: undefined,
    localCpuCount: 2,
    latency: undefined,
    ...over,
  };
}

describe("netperf figures", () => {
  test("service demand: 99.75 % of 2 CPUs at 57775.72 trans/s is 34.530 us/Tr (docs/protocols/netperf.md §8, captured)", () => {
    expect(sprintf("%.3f", serviceDemand(57775.72 * 2, 2, 99.75, 2, "x"))).toBe("34.530");
    // A second stock run: 203788.66 trans/s, 92.82 % → 9.109 us/Tr.
    expect(sprintf("%.3f", serviceDemand(203788.66, 1, 92.82, 2, "x"))).toBe("9.109");
  });

  test("units: 10^6 bits are 125000 bytes, K is 1024 bytes", () => {
    expect(calcThruput(125000 * 3, 1, "m")).toBe(3);
    expect(calcThruput(2048, 2, "K")).toBe(1);
    expect(calcThruput(100, 4, "x")).toBe(25);
    expect(defaultFormat("TCP_RR", undefined)).toBe("x");
    expect(defaultFormat("UDP_STREAM", "x")).toBe("m");
  });

  test("RR: rate and round-trip latency from the client's own count and clock", () => {
    const f = computeFigures(inputs({ local: { elapsedS: 2, bytesSent: 100, bytesReceived: 100, sendCalls: 100, recvCalls: 100, failedSends: 0, transactions: 100000 } }));
    expect(f.thruput).toBe(50000);
    expect(f.transactionRate).toBe(50000);
    expect(f.rttLatency).toBeCloseTo(20, 9);
    expect(f.localCpuUtil).toBe(-1);
    expect(f.remoteSd).toBe(-1);
  });

  test("TCP_STREAM: throughput from the bytes the server received", () => {
    const results = decodeOmniResults(encodeOmniResults({ bytesReceived: 3882215526 }));
    const f = computeFigures(inputs({ test: "TCP_STREAM", results, local: { elapsedS: 2.0004, bytesSent: 1, bytesReceived: 0, sendCalls: 1, recvCalls: 0, failedSends: 0, transactions: 0 } }));
    expect(f.elapsed).toBe(Math.fround(2.0004));
    expect(f.thruput).toBeCloseTo((3882215526 * 8) / 1e6 / Math.fround(2.0004), 6);
  });

  test("remote CPU only when the server granted it; a reported 0 % borrows the local figure (netperf quirk)", () => {
    const granted = decodeOmniResponse(encodeOmniResponse({ flags: 0x8, cpuRate: 100 }));
    const results = decodeOmniResults(encodeOmniResults({ cpuUtil: 0, numCpus: 0, cpuMethod: 8 }));
    const localCpu = { util: 50, user: 10, system: 40, iowait: 0, irq: 0, softirq: 0, peakUtil: 60, peakId: 1, method: 8, numCpus: 2 };
    const local = { elapsedS: 1, bytesSent: 0, bytesReceived: 0, sendCalls: 0, recvCalls: 0, failedSends: 0, transactions: 10000 };
    const f = computeFigures(inputs({ response: granted, results, localCpu, local }));
    expect(f.remoteCpuUtil).toBe(0);
    expect(f.remoteSd).toBeCloseTo((50 * 10000) / 10000 * 2, 3);
    expect(f.remoteCpuMethod).toBe("S");
    const notGranted = computeFigures(inputs({ results, localCpu, local }));
    expect(notGranted.remoteCpuUtil).toBe(-1);
    expect(notGranted.remoteSd).toBe(-1);
  });
});
