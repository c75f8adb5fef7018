import { describe, expect, test } from "bun:test";
import { OmniResults } from "../../interop/netperf/omni-results.ts";
import { netperfRemote, netperfTest } from "./netperf-remote.ts";

const phases = { warmup_s: 0, measured_s: 10, cooldown_s: 0 };

describe("netperfRemote", () => {
  test("the test each native plan is", () => {
    expect(netperfTest({ test: "stream", transport: "tcp" }, "forward")).toBe("TCP_STREAM");
    expect(netperfTest({ test: "stream", transport: "tcp" }, "reverse")).toBe("TCP_MAERTS");
    expect(netperfTest({ test: "stream", transport: "udp" }, "forward")).toBe("UDP_STREAM");
    expect(netperfTest({ test: "rr", transport: "tcp" }, "forward")).toBe("TCP_RR");
    expect(netperfTest({ test: "rr", transport: "udp" }, "forward")).toBe("UDP_RR");
    expect(netperfTest({ test: "crr", transport: "tcp" }, "forward")).toBe("TCP_CRR");
  });

  test("TCP_STREAM with -w: received bytes over the netserver's elapsed time, its host CPU, its socket sizes", () => {
    const res = OmniResults.parse({ bytesReceived: 1_250_000_000, recvCalls: 20000, recvBufSize: 524288, sendBufSize: 524288, elapsedTime: 10, cpuUtil: 42.5, cpuMethod: 8 });
    const r = netperfRemote(res, { test: "stream", transport: "tcp", socket: { sendBuffer: 262144 } }, "forward", phases);
    expect(r.summary).toEqual({ bytes: 1_250_000_000, seconds: 10, throughput_bps: 1e9 });
    expect(r.streams[0]!.side).toBe("recv");
    expect(r.cpu).toEqual({ busy_percent: 42.5 });
    expect(r.socket_buffers).toEqual({ requested_bytes: 262144, send_bytes: 524288, receive_bytes: 524288 });
    expect(r.retransmits).toBeUndefined();
  });

  test("TCP_RR without CPU measurement: transactions, no CPU figure, no socket sizes", () => {
    const res = OmniResults.parse({ bytesReceived: 1000, bytesSent: 1000, transReceived: 1000, elapsedTime: 2 });
    const r = netperfRemote(res, { test: "rr", transport: "tcp", socket: {} }, "forward", phases);
    expect(r.summary!.transactions_per_second).toBe(500);
    expect(r.totals.transactions).toBe(1000);
    expect(r.streams[0]!.side).toBe("server");
    expect(r.cpu).toEqual({});
    expect(r.socket_buffers).toBeUndefined();
  });

  test("TCP_MAERTS: sent bytes and the netserver's retransmits", () => {
    const res = OmniResults.parse({ bytesSent: 5000, elapsedTime: 1, transportRetrans: 3, cpuMethod: 8, cpuUtil: 10 });
    const r = netperfRemote(res, { test: "stream", transport: "tcp", socket: {} }, "reverse", phases);
    expect(r.summary).toMatchObject({ bytes: 5000, retransmits: 3 });
    expect(r.retransmits).toBe(3);
    expect(r.streams[0]!.side).toBe("send");
  });
});
