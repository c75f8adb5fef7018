/**
 * Minimal inputs for the bugs the fuzz targets found (described in known-bugs.ts), each marked `test.failing`:
 * CI stays green while the bug is there, and this file goes red the day a fix lands, so the test and the matching
 * KNOWN predicate get deleted together. Each test states the behaviour the module should have.
 */
import { describe, expect, test } from "bun:test";
import { ClientHeader, decodeClientHeader } from "../../interop/iperf2/client-header.ts";
import { ClientRequest, describeClientHeader } from "../../interop/iperf2/client-request.ts";
import { decodeServerReport, ServerReport } from "../../interop/iperf2/server-report.ts";
import { UdpServerSession } from "../../interop/iperf2/udp-server-session.ts";
import { NetperfClientSession } from "../../interop/netperf/client-session.ts";
import { encodeOmniRequest, OmniRequest } from "../../interop/netperf/omni-request.ts";
import { encodeOmniResponse } from "../../interop/netperf/omni-response.ts";
import { DEFAULT_SERVER_OPTIONS, NetserverSession } from "../../interop/netperf/server-session.ts";

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.replace(/\s+/g, "").match(/../g)!.map((h) => parseInt(h, 16)));
}

/** A captured 2.1.8 TCP header (flags 0x40010078: extended, 60 bytes), -t 1, version 2.1.8. */
const TCP_HEADER = hexBytes("40010078 00000001 00005015 00000000 00000000 ffffff9c 00000000 00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000");

describe("netperf (bug: KNOWN.netperfInfiniteCpuRate)", () => {
  test.failing("dataBound answers a DO_OMNI whose cpu_rate is +Infinity instead of throwing", () => {
    const frame = encodeOmniRequest({ flags: 0x8, direction: 4, testLength: 2 });
    new DataView(frame.buffer).setFloat32(60, Number.POSITIVE_INFINITY, false);
    const written: Uint8Array[] = [];
    const s = new NetserverSession(
      { write: (b) => written.push(b), close: () => {}, act: () => {} },
      { ...DEFAULT_SERVER_OPTIONS, limits: { ...DEFAULT_SERVER_OPTIONS.limits, cpuMeasurable: true } },
      0,
    );
    s.receive(frame, 0);
    expect(s.state).toBe("binding");
    expect(() => s.dataBound({ port: 40000, recvBufSize: 131072, sendBufSize: 16384 }, 0)).not.toThrow();
    expect(written.length).toBe(1);
  });
});

describe("netperf (bug: KNOWN.netperfClientFailsTwice)", () => {
  test.failing("a client that gave up on a chatty server ignores what the server sends afterwards", () => {
    const finals: string[] = [];
    let closes = 0;
    const s = new NetperfClientSession(
      { write: () => {}, close: () => void closes++, act: (a) => void ((a.kind === "failed" || a.kind === "finished") && finals.push(a.kind)) },
      { request: OmniRequest.parse({}), rounds: 1, responseTimeoutMs: 1000, closeTimeoutMs: 1000 },
    );
    s.start(0);
    const reply = encodeOmniResponse({ servErrno: 0, dataPort: 40000 });
    const many = new Uint8Array(reply.length * 8);
    for (let i = 0; i < 8; i++) many.set(reply, i * reply.length);
    s.receive(many, 1);
    expect(finals).toEqual(["failed"]);
    s.receive(reply, 2);
    expect(finals).toEqual(["failed"]);
    expect(closes).toBe(1);
  });
});

describe("iperf 2 (bugs: KNOWN.iperf2*)", () => {
  test.failing("UdpServerSession answers a FIN with sequence -2^63 with a report instead of throwing", () => {
    const s = new UdpServerSession({ send: () => {} }, { flow: () => {}, end: () => {} });
    const peer = { host: "127.0.0.1", port: 40000 };
    const data = new Uint8Array(96);
    data.set(TCP_HEADER.subarray(0, 60), 16);
    new DataView(data.buffer).setUint32(0, 1); // seq 1
    s.onDatagram(data, peer, 1_700_000_000);
    const fin = data.slice();
    new DataView(fin.buffer).setUint32(0, 0);
    new DataView(fin.buffer).setUint32(12, 0x8000_0000); // seq -2^63
    expect(() => s.onDatagram(fin, peer, 1_700_000_000.5)).not.toThrow();
  });

  test.failing("decodeClientHeader never returns a rate its schema rejects (rate high word 0x20000000)", () => {
    const bytes = TCP_HEADER.slice();
    new DataView(bytes.buffer).setUint32(52, 0x2000_0000);
    expect(ClientHeader.safeParse(decodeClientHeader(bytes, "tcp")).success).toBe(true);
  });

  test.failing("describeClientHeader keeps the amount word 0x80000000 within TestAmount", () => {
    const bytes = TCP_HEADER.slice();
    new DataView(bytes.buffer).setUint32(20, 0x8000_0000);
    expect(ClientRequest.safeParse(describeClientHeader(decodeClientHeader(bytes, "tcp"), "tcp")).success).toBe(true);
  });

  test.failing("decodeServerReport keeps 64-bit totals within its schema", () => {
    const report = new Uint8Array(128);
    new DataView(report.buffer).setUint32(16, 0x8000_0000); // valid flag
    new DataView(report.buffer).setUint32(20, 0xffff_ffff); // total bytes high word
    expect(ServerReport.safeParse(decodeServerReport(report)).success).toBe(true);
  });
});
