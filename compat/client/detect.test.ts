import { describe, expect, test } from "bun:test";
import { classifyAnswer } from "./detect.ts";
import { encodeFrame } from "../../src/native/protocol/framing.ts";

/** Every split of `bytes` into a first chunk and the rest, fed as the probe accumulates them. */
function atEveryOffset(bytes: Uint8Array) {
  return Array.from({ length: bytes.length }, (_, k) => [classifyAnswer(bytes.subarray(0, k + 1)), k] as const);
}

describe("classifyAnswer", () => {
  test("a native frame (welcome or refused) is anyperf; one byte of it cannot tell yet", () => {
    const welcome = encodeFrame({ type: "welcome", protocol: 1, version: "0.1.0" });
    for (const [a, k] of atEveryOffset(welcome)) expect(a).toEqual(k === 0 ? undefined : { peer: "anyperf" });
  });

  test("iperf3's state bytes after a cookie: PARAM_EXCHANGE idle, ACCESS_DENIED busy, SERVER_ERROR with its payload", () => {
    expect(classifyAnswer(Uint8Array.of(0x09))).toEqual({ peer: "iperf3" });
    expect(classifyAnswer(Uint8Array.of(0xff))).toEqual({ peer: "iperf3", busy: true });
    // anyperf serve's iperf3 server, as captured: SERVER_ERROR, then i_errno and errno (docs/protocols/iperf3.md §2.4).
    const serverError = Uint8Array.of(0xfe, 0, 0, 0, 0x72, 0, 0, 0, 0);
    for (const [a] of atEveryOffset(serverError)) expect(a).toEqual({ peer: "iperf3" });
  });

  test("iperf 2's ack to the hello names it and its version; fewer bytes than its version words cannot tell yet", () => {
    // What stock iperf -s 2.1.8 and trixie's 2.2.1 answered anyperf's hello with (docs/protocols/iperf2.md §2.3).
    for (const [hex, version] of [
      ["000000020000001c0000000000020001000800030000000000000000", "2.1.8"],
      ["000000020000001c0000000000020002000100010000000000000000", "2.2.1"],
    ] as const) {
      for (const [a, k] of atEveryOffset(Buffer.from(hex, "hex"))) expect(a).toEqual(k < 19 ? undefined : { peer: "iperf", version });
    }
  });

  test("netserver's reply to the padded hello (an unknown request): serv_errno 998 names it", () => {
    // netserver 2.7.0 (and anyperf netserver) answered the hello padded to 656 bytes: type 0, errno 998, zeros.
    const reply = new Uint8Array(656);
    reply.set([0, 0, 0x03, 0xe6], 4);
    for (const [a, k] of atEveryOffset(reply.subarray(0, 16))) expect(a).toEqual(k < 7 ? undefined : { peer: "netperf" });
  });

  test("anything else is named by its first bytes; nothing yet is undefined", () => {
    expect(classifyAnswer(new Uint8Array(0))).toBeUndefined();
    const a = classifyAnswer(new TextEncoder().encode("HTTP/1.1 400"));
    expect(a?.peer).toBeUndefined();
    expect(a && "reason" in a ? a.reason : "").toContain("48 54 54 50");
    // Zero-led but neither an ack nor a netserver reply.
    expect(classifyAnswer(Uint8Array.of(0, 0, 0, 7, 0, 0, 0, 1))?.peer).toBeUndefined();
  });
});
