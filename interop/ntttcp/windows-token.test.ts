import { describe, expect, test } from "bun:test";
import { RecordingTransport } from "./transport.ts";
import { tokenPort, WINDOWS_TOKEN, WindowsTokenExchange, WindowsTokenGate, type TokenOutcome } from "./windows-token.ts";

describe("Windows token exchange (from docs/protocols/ntttcp-windows.md §4.2; no Windows peer)", () => {
  test("sends one 'X' and completes on one byte back, then closes", () => {
    const t = new RecordingTransport();
    const outcomes: TokenOutcome[] = [];
    const x = new WindowsTokenExchange(t, (o) => outcomes.push(o));
    x.start();
    expect(t.writes).toEqual([Uint8Array.of(WINDOWS_TOKEN)]);
    expect(outcomes).toEqual([]);
    x.onData(Uint8Array.of(0x00)); // the value is not checked
    expect(outcomes).toEqual([{ ok: true }]);
    expect(t.closed).toBe(true);
  });

  test("a peer that sends before we do still completes once we have sent", () => {
    const t = new RecordingTransport();
    const outcomes: TokenOutcome[] = [];
    const x = new WindowsTokenExchange(t, (o) => outcomes.push(o));
    x.onData(Uint8Array.of(WINDOWS_TOKEN));
    expect(outcomes).toEqual([]);
    x.start();
    expect(outcomes).toEqual([{ ok: true }]);
  });

  test("a close before the byte fails the exchange", () => {
    const outcomes: TokenOutcome[] = [];
    const x = new WindowsTokenExchange(new RecordingTransport(), (o) => outcomes.push(o));
    x.start();
    x.onClose();
    expect(outcomes).toEqual([{ ok: false, reason: "closed-early" }]);
  });

  test("token port is data port + 1000 and must fit", () => {
    expect(tokenPort(5001)).toBe(6001);
    expect(tokenPort(28001, 100)).toBe(28101);
    expect(() => tokenPort(65000)).toThrow();
  });

  test("gate opens only after every thread's exchange", () => {
    let opened = 0;
    const gate = new WindowsTokenGate(3, () => opened++, () => {});
    const xs = [0, 1, 2].map((i) => gate.exchange(i, new RecordingTransport()));
    for (const x of xs) x.start();
    xs[2]!.onData(Uint8Array.of(1));
    xs[0]!.onData(Uint8Array.of(1));
    expect(opened).toBe(0);
    expect(gate.completed).toBe(2);
    xs[1]!.onData(Uint8Array.of(1));
    expect(opened).toBe(1);
  });

  test("gate reports the first failed thread once", () => {
    const failed: number[] = [];
    const gate = new WindowsTokenGate(2, () => {}, (i) => failed.push(i));
    const a = gate.exchange(0, new RecordingTransport());
    const b = gate.exchange(1, new RecordingTransport());
    a.start();
    b.start();
    b.onClose();
    a.onClose();
    expect(failed).toEqual([1]);
  });

  test("sync mode is limited to 999 threads", () => {
    expect(() => new WindowsTokenGate(1000, () => {}, () => {})).toThrow();
  });
});
