import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type CapturedMessage, allMessages } from "../../tests/fixtures/iperf2/captures.ts";
import { ClientHeader, UDP_HEADER_OFFSET, clientHeaderLength, decodeClientHeader, encodeClientHeader, versionString } from "./client-header.ts";
import { ClientRequest, type ClientRequestInput, buildClientHeader, describeClientHeader } from "./client-request.ts";
import { Iperf2WireError } from "./wire-error.ts";

const SERVER_PORTS = new Set([20501, 20511, 20521, 20541]);

/** Client headers as captured: TCP segments to a server port that start with a header, first datagrams of UDP flows. */
function capturedHeaders(): { m: CapturedMessage; bytes: Uint8Array<ArrayBuffer>; transport: "tcp" | "udp" }[] {
  const out: { m: CapturedMessage; bytes: Uint8Array<ArrayBuffer>; transport: "tcp" | "udp" }[] = [];
  for (const m of allMessages()) {
    if (!SERVER_PORTS.has(m.dstPort)) continue;
    if (m.transport === "tcp" && m.complete && m.bytes[0]! >= 0x40 && m.length < 100 && m.length !== 92) {
      out.push({ m, bytes: m.bytes, transport: "tcp" });
    }
    if (m.transport === "udp" && m.bytes.length >= 76 && m.frame === 1) {
      out.push({ m, bytes: m.bytes.subarray(UDP_HEADER_OFFSET, 76), transport: "udp" });
    }
  }
  return out;
}

/** What each captured command asked for, written out by hand from the command line (iperf 2 units: M = 2^20). */
const expected: Record<string, ClientRequestInput> = {
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M": { transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20501 },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M -e": { transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20501 },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M -r -L 20502": {
    transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20502, connectBack: "tradeoff",
  },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M -d -L 20502": {
    transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20502, connectBack: "dual",
  },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M -X": { transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20501, peerDetect: true },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M -R": { transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20501, direction: "reverse" },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M --full-duplex": {
    transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20501, direction: "full-duplex",
  },
  "iperf -c 127.0.0.1 -p 20501 -n 100K -l 10K": { transport: "tcp", amount: { kind: "bytes", bytes: 102400 }, bufLen: 10240, listenPort: 20501 },
  "iperf -c 127.0.0.1 -p 20501 -t 1 -b 5M -P 2": { transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 5242880, numThreads: 2, listenPort: 20501 },
  "iperf -c 127.0.0.1 -p 20501 -n 20K -l 10K -w 256K -S 0x10 -b 2m": {
    transport: "tcp", amount: { kind: "bytes", bytes: 20480 }, bufLen: 10240, tos: 16, rate: 2000000, listenPort: 20501,
  },
  "iperf -c 127.0.0.1 -p 20511 -u -t 1": { transport: "udp", amount: { kind: "time", seconds: 1 }, rate: 1048576, listenPort: 20511 },
  "iperf -c 127.0.0.1 -p 20541 -u -t 1": { transport: "udp", amount: { kind: "time", seconds: 1 }, rate: 1048576, listenPort: 20541 },
  "iperf -c 127.0.0.1 -p 20521 -u -t 1 -R": { transport: "udp", amount: { kind: "time", seconds: 1 }, rate: 1048576, listenPort: 20521, direction: "reverse" },
  "iperf -c 127.0.0.1 -p 20521 -u -t 1 -l 200 -b 100k": { transport: "udp", amount: { kind: "time", seconds: 1 }, rate: 100000, listenPort: 20521, bufLen: 200 },
};

describe("client header codec on the captures", () => {
  const headers = capturedHeaders();

  test("the captures hold every header variant we expect", () => {
    const commands = new Set(headers.map((h) => h.m.command));
    for (const cmd of Object.keys(expected)) expect(commands.has(cmd)).toBe(true);
    expect(commands.has("iperf -c 127.0.0.1 -p 20501 -t 1 -b 10M --trip-times")).toBe(true);
  });

  test("decode then encode gives the captured bytes back", () => {
    for (const { bytes, transport } of headers) {
      const h = decodeClientHeader(bytes, transport);
      expect(encodeClientHeader(h, transport)).toEqual(bytes);
    }
  });

  test("the announced length matches what was captured", () => {
    for (const { bytes, transport } of headers) {
      const length = clientHeaderLength(new DataView(bytes.buffer, bytes.byteOffset).getUint32(0), transport);
      expect(length).toBe(bytes.length);
    }
  });

  test("describe reads what the command asked for, and build writes the stock bytes for it", () => {
    for (const { m, bytes, transport } of headers) {
      const want = expected[m.command];
      if (!want) continue; // --trip-times: decoded (tail kept) but not something we build
      const h = decodeClientHeader(bytes, transport);
      const got = describeClientHeader(h, transport);
      const built = buildClientHeader(want)!;
      expect(got).toEqual(describeClientHeader(built, transport));
      expect(versionString(got.version)).toBe("2.1.8");
      expect(encodeClientHeader(built, transport)).toEqual(bytes);
    }
  });

  test("--txstart-time: the epoch-start bit and the time at 64/68 are read back; trip-times' start time is no start request", () => {
    const startTime = { sec: 1796542289, usec: 250_000 };
    const built = buildClientHeader(ClientRequest.parse({ transport: "tcp", amount: { kind: "time", seconds: 2 }, startTime }))!;
    const bytes = encodeClientHeader(built, "tcp");
    expect(describeClientHeader(decodeClientHeader(bytes, "tcp"), "tcp").startTime).toEqual(startTime);
    const tt = headers.find((h) => h.m.command.endsWith("--trip-times"))!;
    expect(describeClientHeader(decodeClientHeader(tt.bytes, "tcp"), "tcp").startTime).toBeUndefined();
  });

  test("trip-times header keeps its 20 extra bytes as the tail", () => {
    const tt = headers.find((h) => h.m.command.endsWith("--trip-times"))!;
    const h = decodeClientHeader(tt.bytes, "tcp");
    expect(h.tail.length).toBe(20);
    expect(describeClientHeader(h, "tcp").amount).toEqual({ kind: "time", seconds: 1 });
  });

  test("every proper prefix is reported as short, never mis-decoded", () => {
    for (const { bytes, transport } of headers) {
      for (let i = 0; i < bytes.length; i++) {
        let err: unknown;
        try {
          decodeClientHeader(bytes.subarray(0, i), transport);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(Iperf2WireError);
        expect((err as Iperf2WireError).code).toBe("short");
      }
    }
  });
});

describe("client header edge cases", () => {
  test("no header bits: the bytes are payload (iperf -C sends ASCII digits)", () => {
    expect(clientHeaderLength(0x30313233, "tcp")).toBeNull();
    expect(() => decodeClientHeader(new TextEncoder().encode("0123456789012345678901234567"), "tcp")).toThrow(Iperf2WireError);
  });

  test("classic 24-byte header of old clients asks for a tradeoff test", () => {
    const bytes = new Uint8Array(24);
    new DataView(bytes.buffer).setUint32(0, 0x80000000);
    new DataView(bytes.buffer).setUint32(8, 5002);
    new DataView(bytes.buffer).setInt32(20, -1000);
    expect(clientHeaderLength(0x80000000, "tcp")).toBe(24);
    const r = describeClientHeader(decodeClientHeader(bytes, "tcp"), "tcp");
    expect(r.connectBack).toBe("tradeoff");
    expect(r.listenPort).toBe(5002);
    expect(r.amount).toEqual({ kind: "time", seconds: 10 });
    expect(r.extended).toBe(false);
  });

  test("impossible lengths are bad-length", () => {
    const codeOf = (flags: number, transport: "tcp" | "udp"): string | undefined => {
      try {
        clientHeaderLength(flags, transport);
      } catch (e) {
        return (e as Iperf2WireError).code;
      }
      return undefined;
    };
    expect(codeOf(0x40010028, "tcp")).toBe("bad-length"); // extended header announced as 20 bytes
    expect(codeOf(0x40010078, "udp")).toBe("bad-length"); // 60 announced in a datagram: no room for the 16-byte block
    expect(codeOf(0x80010010, "tcp")).toBe("bad-length"); // classic header announced as 8 bytes
    expect(codeOf(0x40010078, "tcp")).toBeUndefined();
  });

  test("rates above 2^32 use the high word shifted by 8 (stock -b 5G: 40000000 00000100)", () => {
    const h = buildClientHeader({ transport: "tcp", amount: { kind: "time", seconds: 3 }, rate: 5 * 2 ** 30 })!;
    const bytes = encodeClientHeader(h, "tcp");
    const v = new DataView(bytes.buffer);
    expect(v.getUint32(48)).toBe(0x40000000);
    expect(v.getUint32(52)).toBe(0x00000100);
    expect(describeClientHeader(decodeClientHeader(bytes, "tcp"), "tcp").rate).toBe(5 * 2 ** 30);
  });

  test("a rate past 2^53 - 1 (high word 0x20000000: 2^53 bit/s) is a typed bad-value error, 2^53 - 1 still decodes", () => {
    const bytes = capturedHeaders().find((c) => c.transport === "tcp" && c.bytes.length === 60)!.bytes.slice();
    const v = new DataView(bytes.buffer);
    v.setUint32(52, 0x2000_0000);
    expect(() => decodeClientHeader(bytes, "tcp")).toThrow(expect.objectContaining({ code: "bad-value" }));
    v.setUint32(48, 0xffff_ffff);
    v.setUint32(52, 0x1fff_ff00); // (2^21 - 1) << 32 | 0xffffffff = 2^53 - 1
    const h = decodeClientHeader(bytes, "tcp");
    expect(h.ext?.rate).toBe(2 ** 53 - 1);
    expect(ClientHeader.safeParse(h).success).toBe(true);
    expect(encodeClientHeader(h, "tcp")).toEqual(bytes);
  });

  test("the longest time the amount word carries (0x80000000 = 21474836.48 s) is a valid request and round-trips", () => {
    const bytes = capturedHeaders().find((c) => c.transport === "tcp" && c.bytes.length === 60)!.bytes.slice();
    new DataView(bytes.buffer).setUint32(20, 0x8000_0000);
    const r = describeClientHeader(decodeClientHeader(bytes, "tcp"), "tcp");
    expect(r.amount).toEqual({ kind: "time", seconds: 21474836.48 });
    expect(ClientRequest.safeParse(r).success).toBe(true);
    expect(buildClientHeader(r)!.amount).toBe(-0x8000_0000);
  });

  test("byte amounts above 2^31-1 are clamped rather than wrapped", () => {
    const h = buildClientHeader({ transport: "tcp", amount: { kind: "bytes", bytes: 5 * 2 ** 30 } })!;
    expect(h.amount).toBe(0x7fffffff);
  });

  test("invalid input to encode is a typed bad-value error", () => {
    expect(() => encodeClientHeader({ flags: -1, numThreads: 1, port: 1, bufLen: 0, winBand: 0, amount: 0, tail: new Uint8Array(0) }, "tcp")).toThrow(
      Iperf2WireError,
    );
  });

  test("random bytes never throw anything but Iperf2WireError", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), fc.constantFrom("tcp" as const, "udp" as const), (bytes, transport) => {
        try {
          const h = decodeClientHeader(bytes, transport);
          describeClientHeader(h, transport);
        } catch (e) {
          if (!(e instanceof Iperf2WireError)) throw e;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
