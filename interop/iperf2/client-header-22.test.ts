import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeClientHeader, encodeClientHeader } from "./client-header.ts";
import { buildClientHeader, describeClientHeader } from "./client-request.ts";
import { type TcpServerTest, TcpServerSession } from "./tcp-server-session.ts";
import { RecordingStream } from "./transport.ts";
import { Iperf2WireError } from "./wire-error.ts";

/** name -> 2.2.1 client header bytes, from tests/fixtures/iperf2/iperf2-2.2-headers.txt. */
const headers = new Map(
  readFileSync(join(import.meta.dir, "../../tests/fixtures/iperf2/iperf2-2.2-headers.txt"), "utf8")
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => [l.split(" ")[0]!, Uint8Array.from(Buffer.from(l.split(" | ")[1]!, "hex"))] as const),
);
const bytes = (name: string): Uint8Array => headers.get(name)!;

/** The session's reading of `b` (plus payload digits) fed in two pieces cut at every offset: all the same. */
function readings(b: Uint8Array): TcpServerTest[] {
  const stream = new Uint8Array([...b, ...new TextEncoder().encode("0123456789")]);
  const out: TcpServerTest[] = [];
  for (let cut = 0; cut <= stream.length; cut++) {
    const s = new TcpServerSession(new RecordingStream(), { test: (t) => out.push(t), end: () => {}, error: (e) => { throw e; } });
    s.onData(stream.subarray(0, cut));
    s.onData(stream.subarray(cut));
  }
  expect(out.length).toBe(stream.length + 1);
  return out;
}

describe("iperf 2.2.1 client headers (captured)", () => {
  test("plain: 64 bytes (the barrier word at 60), version 2.2.1, no 2.2 options", () => {
    for (const t of readings(bytes("h221"))) {
      expect(t.header?.tail.length).toBe(4);
      expect(t.request).toMatchObject({ numThreads: 1, connectBack: "none", version: { high: 0x00020002 } });
      expect(t.request?.barrierUs).toBeUndefined();
      expect(t.request?.congestion).toBeUndefined();
    }
  });
  test("-Z cubic: 119 bytes, the name at 112 after its 16-bit length, flagged in the lower option word", () => {
    for (const t of readings(bytes("h221z"))) {
      expect(t.header?.ext?.lowerOptions).toBe(0x8000);
      expect(t.request?.congestion).toBe("cubic");
    }
  });
  test("--trip-times: 80 bytes (start time block at 64)", () => {
    for (const t of readings(bytes("h221tt"))) expect(t.request).toMatchObject({ tripTimes: true, numThreads: 1 });
  });
  test("-P 2 --sync-transfer-id: version1 is set but asks for no connect-back; numThreads carries the transfer id", () => {
    for (const t of readings(bytes("h221P2"))) {
      expect(t.request).toMatchObject({ connectBack: "none", numThreads: 2, transferId: 1 });
      expect(t.connectBack).toBeNull();
    }
  });
  test("a congestion name longer than 32 bytes or past the header's length is a wire error when decoding", () => {
    const b = bytes("h221z").slice();
    b[113] = 33;
    expect(() => decodeClientHeader(b, "tcp")).toThrow(Iperf2WireError);
    b[113] = 6;
    expect(() => decodeClientHeader(b, "tcp")).toThrow(/does not fit/);
    // UDP headers carry no such block: the same bits there are not read as a name.
    expect(describeClientHeader(decodeClientHeader(b, "udp"), "udp").congestion).toBeUndefined();
  });

  test("--fq-rate 50m -R (2.2.1 and 2.1.8 alike): the option word's fq-rate bit and 6,250,000 bytes/s at offset 72", () => {
    for (const name of ["h221fq", "h218fq"]) {
      for (const t of readings(bytes(name))) {
        expect(t.request).toMatchObject({ direction: "reverse", fqRate: 6_250_000 });
        expect(t.sendHere?.fqRate).toBe(6_250_000);
      }
    }
    // Without the bit, the same words ask for nothing.
    const plain = bytes("h221fq").slice();
    plain[32] = 0x04;
    expect(describeClientHeader(decodeClientHeader(plain, "tcp"), "tcp").fqRate).toBeUndefined();
  });

  test("iperf 2's master (2.2.n): every header reads the same at every split, re-encodes byte for byte, and asks what its command asked", () => {
    const asked: Record<string, object> = {
      h22n: { direction: "forward", numThreads: 1, connectBack: "none" },
      h22nR: { direction: "reverse" },
      h22ntt: { tripTimes: true },
      h22nfq: { direction: "reverse", fqRate: 6_250_000 },
      h22nZ: { congestion: "cubic" },
      // --sync-transfer-id without 2.2.1's version1 bit: the id is in numThreads all the same, and no -d/-r is asked.
      h22nP2: { numThreads: 2, transferId: 1, connectBack: "none" },
    };
    for (const [name, want] of Object.entries(asked)) {
      for (const t of readings(bytes(name))) {
        expect(t.request, name).toMatchObject({ version: { high: 0x00020002, low: 0x00020005 }, ...want });
        expect(encodeClientHeader(t.header!, "tcp"), name).toEqual(new Uint8Array(bytes(name)));
      }
    }
  });

  test("--tcp-write-prefetch 16K -R (2.2.1): the option word's prefetch bit and 16384 at offset 56, for the server's sender", () => {
    for (const t of readings(bytes("h221wp"))) {
      expect(t.request).toMatchObject({ direction: "reverse", writePrefetch: 16_384 });
      expect(t.sendHere?.writePrefetch).toBe(16_384);
    }
  });
  test("--tcp-quickack (2.2.1 and 2.1.8): the option word's quickack bit, read at every split; ours builds 2.1.8's bytes", () => {
    for (const name of ["h221qa", "h218qa"]) for (const t of readings(bytes(name))) expect(t.request?.tcpQuickAck, name).toBe(true);
    const ours = buildClientHeader({ transport: "tcp", amount: { kind: "time", seconds: 0.3 }, listenPort: 27861, tcpQuickAck: true })!;
    expect(encodeClientHeader(ours, "tcp")).toEqual(new Uint8Array(bytes("h218qa")));
    // Stock clients leave the bit off with -R (the server only sends); UDP has no such bit.
    expect(buildClientHeader({ transport: "tcp", direction: "reverse", amount: { kind: "time", seconds: 1 }, tcpQuickAck: true })!.ext?.options).toBe(0x0400);
    expect(describeClientHeader(decodeClientHeader(bytes("h22n"), "tcp"), "tcp").tcpQuickAck).toBe(false);
  });
});
