import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { captureConversations, CAPTURES, split656 } from "../../tests/fixtures/netperf/load.ts";
import { FrameReader } from "./frame-reader.ts";
import { decodeCpuCalibrateReply, decodePassphrase, encodeCpuCalibrateReply, encodePassphrase, encodeUnknownRequestReply } from "./minor-messages.ts";
import { decodeOmniRequest, encodeOmniRequest, OmniRequest } from "./omni-request.ts";
import { decodeOmniResponse, encodeOmniResponse } from "./omni-response.ts";
import { decodeOmniResults, encodeOmniResults } from "./omni-results.ts";
import { MESSAGE_SIZE, messageType } from "./words.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** Every message of every captured control connection, with its direction. */
function allMessages() {
  const out: { capture: string; fromClient: boolean; index: number; bytes: Uint8Array }[] = [];
  for (const name of CAPTURES) {
    for (const conv of captureConversations(name)) {
      split656(conv.toServer).forEach((bytes, index) => out.push({ capture: name, fromClient: true, index, bytes }));
      split656(conv.toClient).forEach((bytes, index) => out.push({ capture: name, fromClient: false, index, bytes }));
    }
  }
  return out;
}

describe("captured control streams", () => {
  test("every stream is a whole number of 656-byte messages", () => {
    for (const name of CAPTURES) {
      for (const conv of captureConversations(name)) {
        expect(conv.toServer.length % MESSAGE_SIZE).toBe(0);
        expect(conv.toClient.length % MESSAGE_SIZE).toBe(0);
      }
    }
  });

  test("the frame reader returns the same messages for the whole stream and for a split at every offset", () => {
    for (const name of CAPTURES) {
      for (const conv of captureConversations(name)) {
        for (const stream of [conv.toServer, conv.toClient]) {
          const expected = split656(stream).map(hex);
          expect(new FrameReader().push(stream).map(hex)).toEqual(expected);
          for (let cut = 0; cut <= stream.length; cut++) {
            const r = new FrameReader();
            const got = [...r.push(stream.subarray(0, cut)), ...r.push(stream.subarray(cut))].map(hex);
            expect(got).toEqual(expected);
            expect(r.pending).toBe(0);
          }
        }
      }
    }
  });

  test("byte-at-a-time feeding reassembles too, and never buffers more than one message", () => {
    const [conv] = captureConversations("tcp_rr_confid");
    const r = new FrameReader();
    const got: string[] = [];
    for (const b of conv!.toClient) {
      got.push(...r.push(Uint8Array.of(b)).map(hex));
      expect(r.pending).toBeLessThan(MESSAGE_SIZE);
    }
    expect(got).toEqual(split656(conv!.toClient).map(hex));
  });
});

describe("DO_OMNI request", () => {
  test("re-encodes every captured request byte for byte", () => {
    for (const m of allMessages().filter((m) => m.fromClient && messageType(m.bytes) === 97)) {
      expect(hex(encodeOmniRequest(decodeOmniRequest(m.bytes)))).toBe(hex(m.bytes));
    }
  });

  test("decodes the TCP_RR capture field by field (docs/protocols/netperf.md §3)", () => {
    const [conv] = captureConversations("tcp_rr_r1");
    const req = decodeOmniRequest(split656(conv!.toServer)[0]!);
    expect(req).toMatchObject({
      type: 97,
      cpuAffinity: -1,
      sendBufSize: -1,
      sendSize: -1,
      sendAlignment: 8,
      sendWidth: 1,
      requestSize: 1,
      recvWidth: 1,
      responseSize: 1,
      flags: 0x20,
      cpuRate: 0,
      testLength: 2,
      sendDirtyCount: -1,
      dataPort: 22313,
      ipFamily: 4,
      socketType: 1,
      protocol: 6,
      direction: 6,
      netperfPort: 22312,
      netperfIp: "0.0.0.0",
      netserverIp: "0.0.0.0",
      socketPrio: -1,
      socketTos: -1,
      congControl: "",
      fillFile: "",
    });
  });

  test("per-test settings of the captures (docs/protocols/netperf.md §3.2)", () => {
    const first = (name: (typeof CAPTURES)[number]) => decodeOmniRequest(split656(captureConversations(name)[0]!.toServer)[0]!);
    expect(first("udp_stream_m1")).toMatchObject({ socketType: 2, protocol: 17, direction: 4, flags: 0, sendWidth: 212993, requestSize: -1 });
    expect(first("tcp_stream")).toMatchObject({ socketType: 1, protocol: 6, direction: 4, flags: 0x20, sendWidth: 2, recvWidth: 0 });
    expect(first("tcp_crr")).toMatchObject({ direction: 6, flags: 0x24, dataPort: 22317 });
    expect(first("udp_rr_r1")).toMatchObject({ socketType: 2, protocol: 17, direction: 6, flags: 0x20 });
    expect(first("tcp_rr_cpu").flags).toBe(0x28);
    expect(first("tcp_rr_count")).toMatchObject({ testLength: -5000, requestSize: 32, responseSize: 1024, flags: 0x21 });
  });

  test("carries IPv4 addresses in network order and IPv6 with each 4-byte group reversed (docs/protocols/netperf.md §2.4)", () => {
    const v4 = encodeOmniRequest({ netperfIp: "127.0.0.1", netserverIp: "10.1.2.3" });
    expect(hex(v4.subarray(120, 152))).toBe(`7f000001${"0".repeat(24)}0a010203${"0".repeat(24)}`);
    const v6 = encodeOmniRequest({ ipFamily: 6, netperfIp: "::1", netserverIp: "2001:db8::5" });
    expect(hex(v6.subarray(120, 136))).toBe("000000000000000000000000" + "01000000");
    expect(hex(v6.subarray(136, 152))).toBe("b80d0120" + "00000000" + "00000000" + "05000000");
    const back = decodeOmniRequest(v6);
    expect(back.netperfIp).toBe("::1");
    expect(back.netserverIp).toBe("2001:db8::5");
  });

  test("round-trips any valid request", () => {
    const i32 = fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff });
    const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
    const text = (max: number) => fc.string({ maxLength: max }).map((s) => s.replace(/[^\x01-\x7f]/g, "a"));
    fc.assert(
      fc.property(
        fc.record({
          cpuAffinity: i32,
          sendBufSize: i32,
          sendSize: i32,
          sendWidth: u32,
          requestSize: i32,
          responseSize: i32,
          flags: u32,
          cpuRate: fc.float({ noNaN: true, noDefaultInfinity: true }),
          testLength: i32,
          dataPort: u32,
          direction: u32,
          netperfIp: fc.ipV4(),
          netserverIp: fc.ipV4(),
          congControl: text(16),
          fillFile: text(32),
        }),
        (fields) => {
          const req = OmniRequest.parse(fields);
          const back = decodeOmniRequest(encodeOmniRequest(req));
          expect(back).toEqual({ ...req, cpuRate: Math.fround(req.cpuRate) });
        },
      ),
    );
  });
});

describe("OMNI_RESPONSE", () => {
  test("re-encodes every captured setup reply byte for byte", () => {
    let seen = 0;
    for (const name of CAPTURES) {
      for (const conv of captureConversations(name)) {
        const replies = split656(conv.toClient);
        // Replies alternate setup / results; setup replies are the even ones. A later round's reply reuses the
        // buffer of the previous results, so past the defined fields (byte 209) it carries stale bytes.
        replies.forEach((bytes, i) => {
          if (i % 2 !== 0) return;
          seen++;
          const again = encodeOmniResponse(decodeOmniResponse(bytes));
          const end = i === 0 ? MESSAGE_SIZE : 209;
          expect(hex(again.subarray(0, end))).toBe(hex(bytes.subarray(0, end)));
        });
      }
    }
    expect(seen).toBeGreaterThanOrEqual(12);
  });

  test("captured sizes (docs/protocols/netperf.md §4)", () => {
    const setup = (name: (typeof CAPTURES)[number]) => decodeOmniResponse(split656(captureConversations(name)[0]!.toClient)[0]!);
    const sizes = (r: ReturnType<typeof setup>) => [r.recvBufSize, r.receiveSize, r.recvWidth, r.sendBufSize, r.sendSize, r.sendWidth];
    expect(sizes(setup("tcp_stream"))).toEqual([131072, 131072, 2, 16384, -1, 2]);
    expect(sizes(setup("udp_stream_m1"))).toEqual([212992, 212992, 2, 212992, -1, 212993]);
    expect(sizes(setup("tcp_rr_r1"))).toEqual([131072, 1, 1, 16384, 1, 1]);
    expect(sizes(setup("udp_rr_r1"))).toEqual([212992, 1, 1, 212992, 1, 1]);
    const cpu = setup("tcp_rr_cpu");
    expect(cpu.flags & 0x8).toBe(0x8);
    expect(cpu.cpuRate).toBe(100);
    expect(setup("tcp_rr_r1").dataPort).toBe(22313);
  });
});

describe("results", () => {
  test("re-encodes captured results; only NaN payloads of stale fields may differ", () => {
    for (const name of CAPTURES) {
      for (const conv of captureConversations(name)) {
        split656(conv.toClient).forEach((bytes, i) => {
          if (i % 2 !== 1) return;
          const again = encodeOmniResults(zeroNaN(decodeOmniResults(bytes)));
          for (let off = 0; off < MESSAGE_SIZE; off += 4) {
            const word = bytes.subarray(off, off + 4);
            const isNaNWord = new DataView(word.buffer, word.byteOffset, 4).getFloat32(0) !== new DataView(word.buffer, word.byteOffset, 4).getFloat32(0);
            if (isNaNWord && off >= 48 && off < 96) continue;
            expect(hex(again.subarray(off, off + 4))).toBe(hex(word));
          }
        });
      }
    }
  });

  test("64-bit byte counts, type quirk and strings (docs/protocols/netperf.md §5)", () => {
    const results = (name: (typeof CAPTURES)[number]) => decodeOmniResults(split656(captureConversations(name)[0]!.toClient)[1]!);
    const l3 = results("tcp_stream_l3");
    expect(l3.bytesReceived).toBe(11958960128);
    expect(l3.type).toBe(0x6200_0000);
    const rr = results("tcp_rr_r1");
    expect(rr).toMatchObject({ bytesReceived: 101227, recvCalls: 101227, bytesSent: 101227, transReceived: 101227, recvBufSize: 261944, sendBufSize: 4194304, congControl: "bbr" });
    expect(rr.elapsedTime).toBeCloseTo(2.00013, 5);
    const udp = results("udp_stream_m1");
    expect(udp).toMatchObject({ bytesReceived: 279337, recvCalls: 279337, transportRetrans: -1 });
    const cpu = results("tcp_rr_cpu");
    expect(cpu.cpuMethod).toBe(8);
    expect(cpu.numCpus).toBe(2);
    expect(cpu.cpuUtil).toBeGreaterThan(0);
  });

  test("counts above 2^32 survive a round trip", () => {
    const back = decodeOmniResults(encodeOmniResults({ bytesReceived: 2 ** 40 + 12345, bytesSent: 2 ** 33 }));
    expect(back.bytesReceived).toBe(2 ** 40 + 12345);
    expect(back.bytesSent).toBe(2 ** 33);
  });
});

describe("minor messages", () => {
  test("passphrase matches the capture", () => {
    const [ok, bad] = captureConversations("passphrase");
    const first = split656(ok!.toServer)[0]!;
    expect(decodePassphrase(first)).toBe("secret");
    expect(hex(encodePassphrase("secret"))).toBe(hex(first));
    expect(decodePassphrase(split656(bad!.toServer)[0]!)).toBe("wrong");
  });

  test("unknown-type reply carries 998 (docs/protocols/netperf.md §2.6)", () => {
    const r = encodeUnknownRequestReply(0);
    expect(hex(r.subarray(0, 8))).toBe("00000000000003e6");
  });

  test("CPU_CALIBRATE reply: rate as float, CPU count as integer", () => {
    const r = encodeCpuCalibrateReply(100, 2);
    expect(hex(r.subarray(0, 16))).toBe("000000050000000042c8000000000002");
    expect(decodeCpuCalibrateReply(r)).toEqual({ rate: 100, cpus: 2 });
  });
});

function zeroNaN<T extends object>(o: T): T {
  const out = { ...o } as Record<string, unknown>;
  for (const [k, v] of Object.entries(out)) if (typeof v === "number" && Number.isNaN(v)) out[k] = 0;
  return out as T;
}
