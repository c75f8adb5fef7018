import { describe, expect, test } from "bun:test";
import { FrameDecoder, MAX_FRAME, NativeProtocolError, encodeFrame } from "./framing.ts";
import { concatBytes } from "../../../lib/bytes.ts";

const messages = [{ type: "hello", protocol: 1, tool: "anyperf", version: "0.1.0" }, { type: "go" }, { type: "window", edge: "start", note: "é✓" }];
const wire = concatBytes(messages.map(encodeFrame));

describe("native framing", () => {
  test("a frame is AP, a big-endian length, then the JSON", () => {
    const f = encodeFrame({ type: "go" });
    expect([...f.subarray(0, 6)]).toEqual([0x41, 0x50, 0, 0, 0, 13]);
    expect(new TextDecoder().decode(f.subarray(6))).toBe('{"type":"go"}');
  });

  test("whole bytes decode to the messages", () => {
    expect(new FrameDecoder().push(wire)).toEqual({ frames: messages });
  });

  test("split at every offset: same messages, nothing left over", () => {
    for (let cut = 0; cut <= wire.length; cut++) {
      const d = new FrameDecoder();
      const got = [...d.push(wire.subarray(0, cut)).frames, ...d.push(wire.subarray(cut)).frames];
      expect(got).toEqual(messages);
      expect(d.pending).toBe(0);
    }
  });

  test("one byte at a time", () => {
    const d = new FrameDecoder();
    const got: unknown[] = [];
    for (const b of wire) got.push(...d.push(Uint8Array.of(b)).frames);
    expect(got).toEqual(messages);
  });

  test("stock iperf3's answer (one PARAM_EXCHANGE byte) fails at the first byte", () => {
    const r = new FrameDecoder().push(Uint8Array.of(0x09));
    expect(r.error).toBeInstanceOf(NativeProtocolError);
    expect(r.error?.message).toBe("not the anyperf protocol (byte 0 of a frame is 0x09, not 0x41)");
  });

  test("a length over the bound is refused before any body arrives", () => {
    const head = Uint8Array.of(0x41, 0x50, 0, 0, 0, 0);
    new DataView(head.buffer).setUint32(2, MAX_FRAME + 1, false);
    expect(new FrameDecoder().push(head).error?.message).toMatch(/exceeds/);
    new DataView(head.buffer).setUint32(2, 0xffffffff, false);
    expect(new FrameDecoder().push(head).error?.message).toMatch(/exceeds/);
  });

  test("a body that is not UTF-8 JSON is refused", () => {
    const bad = (body: Uint8Array) => concatBytes([Uint8Array.of(0x41, 0x50, 0, 0, 0, body.length), body]);
    expect(new FrameDecoder().push(bad(new TextEncoder().encode("{nope"))).error?.message).toMatch(/not UTF-8 JSON/);
    expect(new FrameDecoder().push(bad(Uint8Array.of(0xff, 0xfe))).error?.message).toMatch(/not UTF-8 JSON/);
  });

  test("random garbage never throws: frames, or frames and one NativeProtocolError", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let i = 0; i < 2000; i++) {
      const g = Uint8Array.from({ length: 2 + (rnd() % 40) }, rnd);
      if (i % 3 === 0) g.set([0x41, 0x50]);
      const r = new FrameDecoder().push(g);
      if (r.error) expect(r.error).toBeInstanceOf(NativeProtocolError);
    }
  });

  test("the frames before a bad one come out with the error, however the bytes were cut", () => {
    const bytes = concatBytes([encodeFrame({ type: "go" }), Uint8Array.of(0x41, 0x51)]);
    expect(new FrameDecoder().push(bytes)).toEqual({ frames: [{ type: "go" }], error: expect.any(NativeProtocolError) });
    const d = new FrameDecoder();
    expect(d.push(bytes.subarray(0, 19))).toEqual({ frames: [{ type: "go" }] });
    expect(d.push(bytes.subarray(19)).error).toBeInstanceOf(NativeProtocolError);
  });

  test("after an error the decoder stays failed (yields nothing more)", () => {
    const d = new FrameDecoder();
    expect(d.push(Uint8Array.of(0x00)).error).toBeInstanceOf(NativeProtocolError);
    expect(d.push(wire)).toEqual({ frames: [] });
  });
});
