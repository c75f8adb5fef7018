/**
 * Minimal inputs for the bugs the fuzz targets found (described in known-bugs.ts), each marked `test.failing`:
 * CI stays green while the bug is there, and this file goes red the day a fix lands, so the test and the matching
 * KNOWN predicate get deleted together. Each test states the behaviour the module should have.
 */
import { describe, expect, test } from "bun:test";
import { NetperfClientSession } from "../../interop/netperf/client-session.ts";
import { encodeOmniRequest, OmniRequest } from "../../interop/netperf/omni-request.ts";
import { encodeOmniResponse } from "../../interop/netperf/omni-response.ts";
import { DEFAULT_SERVER_OPTIONS, NetserverSession } from "../../interop/netperf/server-session.ts";

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
