import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { clientsOf, LINUX_SYNC_CAPTURES, parseCapture, splits, streamOf } from "../../tests/fixtures/ntttcp/capture.ts";
import { decodeSyncInt, encodeSyncInt, safeCycleProposal, SyncCommand, SyncFramer } from "./linux-sync-codec.ts";

describe("sync int codec", () => {
  test("encodes big-endian as on the wire", () => {
    expect([...encodeSyncInt(SyncCommand.query)]).toEqual([0, 0, 0, 0x58]);
    expect([...encodeSyncInt(300)]).toEqual([0, 0, 1, 0x2c]);
    expect([...encodeSyncInt(-1)]).toEqual([0xff, 0xff, 0xff, 0xff]);
  });

  test("round-trips every 32-bit signed value", () => {
    fc.assert(fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), (v) => decodeSyncInt(encodeSyncInt(v)) === v));
  });

  test("rejects values that do not fit", () => {
    expect(() => encodeSyncInt(2 ** 31)).toThrow();
    expect(() => encodeSyncInt(1.5)).toThrow();
  });

  test("never proposes a cycle the receiver reads as a command", () => {
    expect(safeCycleProposal(69)).toBe(70);
    expect(safeCycleProposal(76)).toBe(77);
    expect(safeCycleProposal(82)).toBe(83);
    expect(safeCycleProposal(88)).toBe(89);
    expect(safeCycleProposal(300)).toBe(300);
    expect(safeCycleProposal(0)).toBe(0);
  });
});

describe("framer over captured sync streams", () => {
  for (const name of LINUX_SYNC_CAPTURES) {
    const cap = parseCapture(name);
    for (const client of clientsOf(cap)) {
      for (const from of ["client", "server"] as const) {
        const bytes = streamOf(cap, client, from);
        test(`${name} ${from} of ${client}: whole and split at every offset`, () => {
          expect(bytes.length % 4).toBe(0);
          const whole = new SyncFramer().push(bytes);
          expect(whole.length).toBe(bytes.length / 4);
          for (const parts of splits(bytes)) {
            const f = new SyncFramer();
            const got = parts.flatMap((p) => f.push(p));
            expect(got).toEqual(whole);
            expect(f.partial).toBe(0);
          }
          // Byte by byte as well: the worst split TCP can produce.
          const f = new SyncFramer();
          expect([...bytes].flatMap((b) => f.push(Uint8Array.of(b)))).toEqual(whole);
        });
      }
    }
  }

  test("the normal exchange decodes to X/11, cycle/cycle, R/R", () => {
    const cap = parseCapture("ntttcp-linux-sync-tcp.txt");
    const [client] = clientsOf(cap);
    expect(new SyncFramer().push(streamOf(cap, client!, "client"))).toEqual([0x58, 3, 0x52]);
    expect(new SyncFramer().push(streamOf(cap, client!, "server"))).toEqual([11, 3, 0x52]);
  });
});
