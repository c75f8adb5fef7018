import { expect, test } from "bun:test";
import { blankCounters } from "../../src/counters.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import { checkOmniRequest, DEFAULT_LIMITS } from "../../interop/netperf/request-check.ts";
import { OmniRequest } from "../../interop/netperf/omni-request.ts";
import { buildOmniRequest, MigratedTest } from "../../interop/netperf/test-request.ts";
import { clientCounters, clientSpec, netperfPayload, serverCounters, serverSpec, transportRetrans } from "./data-specs.ts";

const counters = { ...blankCounters(), bytes: 1000, tcpRetrans: 3, packets: 10, transactions: 7, sendErrors: 2, connections: 1, closed: 1 };

test("netperf's fill pattern", () => {
  expect(new TextDecoder().decode(netperfPayload(12))).toBe("netperf\0netp");
});

test("every test maps to valid engine streams on both sides", () => {
  for (const test of MigratedTest.options) {
    const req = OmniRequest.parse(buildOmniRequest({ test, testLength: 2, requestSize: 1, responseSize: 1, localSendBuf: 16384, localRecvBuf: 131072 }).request);
    const check = checkOmniRequest(req, DEFAULT_LIMITS);
    if (!check.ok) throw new Error(check.reason);
    if (test !== "TCP_MAERTS") StreamSpec.parse(serverSpec(check.setup));
    const spec = StreamSpec.parse(clientSpec({ test, dataHost: "127.0.0.1", dataPort: 26999, family: "ipv4", localPort: 0, sendSize: 16384, recvSize: 131072, requestSize: 1, responseSize: 1, firstBurst: 0, count: 0, noDelay: false, timeCalls: false }));
    expect(spec.kind).toBe({ TCP_STREAM: "tcp-send", TCP_MAERTS: "tcp-recv", UDP_STREAM: "udp-send", TCP_RR: "rr-client", TCP_CRR: "rr-client", UDP_RR: "rr-client" }[test] as never);
  }
});

test("UDP streams end with netperf's three empty datagrams; CRR connects per transaction", () => {
  const udp = StreamSpec.parse(clientSpec({ test: "UDP_STREAM", dataHost: "127.0.0.1", dataPort: 1, family: "ipv4", localPort: 26998, sendSize: 1, recvSize: 1, requestSize: 1, responseSize: 1, firstBurst: 0, count: 0, noDelay: false, timeCalls: false }));
  expect(udp).toMatchObject({ kind: "udp-send", datagramSize: 1, format: "none", endMarker: "zero-length-x3", bind: { host: "0.0.0.0", port: 26998 } });
  const crr = StreamSpec.parse(clientSpec({ test: "TCP_CRR", dataHost: "127.0.0.1", dataPort: 1, family: "ipv4", localPort: 26998, sendSize: 1, recvSize: 1, requestSize: 1, responseSize: 1, firstBurst: 3, count: 0, noDelay: false, timeCalls: false }));
  expect(crr).toMatchObject({ kind: "rr-client", perTransactionConnect: true, inFlight: 1 });
  expect("bind" in crr && crr.bind).toBeFalsy();
});

test("counters read back in netperf's terms", () => {
  expect(clientCounters({ test: "UDP_STREAM", requestSize: 1, responseSize: 1, sendSize: 100 }, counters, 2)).toEqual({ elapsedS: 2, bytesSent: 1000, bytesReceived: 0, sendCalls: 10, recvCalls: 0, failedSends: 2, transactions: 0 });
  // 1000 bytes in 10 writes of a 300-byte message: netperf would have made 4 send() calls, the last cut short.
  expect(clientCounters({ test: "TCP_STREAM", requestSize: 1, responseSize: 1, sendSize: 300 }, counters, 2)).toMatchObject({ bytesSent: 1000, sendCalls: 4 });
  expect(clientCounters({ test: "TCP_RR", requestSize: 32, responseSize: 1024, sendSize: 0 }, counters, 1)).toMatchObject({ bytesSent: 7 * 32, bytesReceived: 7 * 1024, transactions: 7 });
  const req = OmniRequest.parse(buildOmniRequest({ test: "TCP_RR", testLength: 2, requestSize: 32, responseSize: 1024, localSendBuf: 1, localRecvBuf: 1 }).request);
  const check = checkOmniRequest(req, DEFAULT_LIMITS);
  if (!check.ok) throw new Error(check.reason);
  expect(serverCounters(check.setup, counters)).toEqual({ bytesReceived: 7 * 32, recvCalls: 7, bytesSent: 7 * 1024, sendCalls: 7, transactions: 7 });
});

test("transport retransmissions: TCP_INFO's count for one-connection TCP tests, -1 for UDP and TCP_CRR", () => {
  expect(transportRetrans({ protocol: "tcp", connectPerTransaction: false }, counters)).toBe(3);
  expect(transportRetrans({ protocol: "tcp", connectPerTransaction: true }, counters)).toBe(-1);
  expect(transportRetrans({ protocol: "udp", connectPerTransaction: false }, counters)).toBe(-1);
  expect(transportRetrans({ protocol: "tcp", connectPerTransaction: false }, undefined)).toBe(-1);
});
