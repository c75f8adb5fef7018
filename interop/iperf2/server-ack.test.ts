import { describe, expect, test } from "bun:test";
import { allMessages } from "../../tests/fixtures/iperf2/captures.ts";
import { versionString } from "./client-header.ts";
import { ACK_LENGTH, decodeServerAck, encodeServerAck, serverAckLength } from "./server-ack.ts";
import { Iperf2WireError } from "./wire-error.ts";

const acks = allMessages().filter((m) => m.transport === "tcp" && m.complete && (m.length === 28 || m.length === 52) && m.srcPort === 20501);

describe("server ack", () => {
  test("captures hold plain acks and one trip-times ack", () => {
    expect(acks.filter((a) => a.length === 28).length).toBeGreaterThanOrEqual(8);
    expect(acks.filter((a) => a.length === 52).length).toBe(1);
  });

  test("every captured 28-byte ack is exactly what we send", () => {
    for (const a of acks.filter((x) => x.length === ACK_LENGTH)) expect(encodeServerAck()).toEqual(a.bytes);
  });

  test("captured acks decode to version 2.1.8; the trip-times one keeps its timestamps as tail", () => {
    for (const a of acks) {
      const ack = decodeServerAck(a.bytes);
      expect(versionString(ack.version)).toBe("2.1.8");
      expect(ack.tail.length).toBe(a.length - ACK_LENGTH);
    }
  });

  test("prefixes: the length is unknown before 8 bytes, then the decode is short until complete", () => {
    for (const a of acks) {
      for (let i = 0; i < a.length; i++) {
        const part = a.bytes.subarray(0, i);
        expect(serverAckLength(part)).toBe(i < 8 ? null : a.length);
        expect(() => decodeServerAck(part)).toThrow(Iperf2WireError);
      }
    }
  });

  test("ASCII payload is not an ack", () => {
    expect(() => serverAckLength(new TextEncoder().encode("0123456789"))).toThrow(Iperf2WireError);
    const bad = encodeServerAck();
    new DataView(bad.buffer).setUint32(4, 12);
    expect(() => decodeServerAck(bad)).toThrow(Iperf2WireError);
  });
});
