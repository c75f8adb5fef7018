import { describe, expect, test } from "bun:test";
import { CAPTURE_PARAMS } from "../../tests/fixtures/netperf/capture-params.ts";
import { captureConversations, CAPTURES, split656 } from "../../tests/fixtures/netperf/load.ts";
import { Direction, OmniFlag } from "./constants.ts";
import { encodeOmniRequest, OmniRequest } from "./omni-request.ts";
import { buildOmniRequest, chooseSendSize } from "./test-request.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("buildOmniRequest", () => {
  test("reproduces the stock request of every capture byte for byte", () => {
    for (const name of CAPTURES) {
      const { params, passphrase } = CAPTURE_PARAMS[name];
      const conv = captureConversations(name)[0]!;
      const frames = split656(conv.toServer);
      const captured = frames[passphrase === undefined ? 0 : 1]!;
      expect(hex(encodeOmniRequest(buildOmniRequest(params).request))).toBe(hex(captured));
    }
  });

  test("TCP_MAERTS asks the server to transmit and reports a receive ring (docs/protocols/netperf.md §3.2)", () => {
    const { request, local } = buildOmniRequest({ test: "TCP_MAERTS", testLength: 2, localSendBuf: 16384, localRecvBuf: 131072 });
    const req = OmniRequest.parse(request);
    expect(req.direction).toBe(Direction.XMIT);
    expect(req.flags).toBe(OmniFlag.ROUTING_ALLOWED);
    expect([req.sendWidth, req.recvWidth]).toEqual([0, 2]);
    expect(local.recvSize).toBe(131072);
  });

  test("a stream given -r sizes moves them per call and reports only the -m/-M it was given, as netperf 2.7.0", () => {
    const send = buildOmniRequest({ test: "TCP_STREAM", testLength: 1, localSendBuf: 16384, localRecvBuf: 131072, requestSize: 100, responseSize: 100 });
    expect(send.local).toMatchObject({ sendSize: 0, sendCall: 100 });
    const sized = buildOmniRequest({ test: "TCP_STREAM", testLength: 1, localSendBuf: 16384, localRecvBuf: 131072, requestSize: 100, localSendSize: 1000 });
    expect(sized.local).toMatchObject({ sendSize: 1000, sendCall: 100 });
    const recv = buildOmniRequest({ test: "TCP_MAERTS", testLength: 1, localSendBuf: 16384, localRecvBuf: 131072, requestSize: 100, responseSize: 200 });
    expect(recv.local).toMatchObject({ recvSize: 0, recvCall: 200 });
    expect(buildOmniRequest({ test: "TCP_STREAM", testLength: 1, localSendBuf: 16384, localRecvBuf: 131072 }).local).toMatchObject({ sendSize: 16384, sendCall: 16384 });
  });

  test("UDP_STREAM routing stays off unless -R 1; REMOTE_CONG_CONTROL sets the same bit", () => {
    const base = { test: "UDP_STREAM", testLength: 1, localSendBuf: 212992, localRecvBuf: 212992 } as const;
    expect(OmniRequest.parse(buildOmniRequest(base).request).flags).toBe(0);
    expect(OmniRequest.parse(buildOmniRequest({ ...base, routingAllowed: true }).request).flags).toBe(0x20);
    expect(OmniRequest.parse(buildOmniRequest({ ...base, wantRemoteCongestion: true }).request).flags).toBe(0x20);
    expect(buildOmniRequest(base).local.sendSize).toBe(65507);
  });

  test("count mode, CPU, nodelay, keepalive map to the wire", () => {
    const req = OmniRequest.parse(
      buildOmniRequest({
        test: "TCP_RR",
        testLength: -100,
        measureRemoteCpu: true,
        remoteCpuRate: 50,
        remoteNoDelay: true,
        keepAlive: true,
        localSendBuf: 16384,
        localRecvBuf: 131072,
      }).request,
    );
    expect(req.testLength).toBe(-100);
    expect(req.flags).toBe((0x8000_0000 | 0x20 | 0x8 | 0x1) >>> 0);
    expect(req.cpuRate).toBe(50);
    expect([req.requestSize, req.responseSize]).toEqual([1, 1]);
  });

  test("chooseSendSize caps UDP at 65507 and falls back to 4096", () => {
    expect(chooseSendSize(16384, "tcp")).toBe(16384);
    expect(chooseSendSize(212992, "udp")).toBe(65507);
    expect(chooseSendSize(0, "tcp")).toBe(4096);
  });
});
