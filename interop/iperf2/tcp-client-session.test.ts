import { describe, expect, test } from "bun:test";
import { loadCapture, splits } from "../../tests/fixtures/iperf2/captures.ts";
import { encodeServerAck } from "./server-ack.ts";
import { TcpClientSession } from "./tcp-client-session.ts";
import { RecordingStream } from "./transport.ts";

const plain = loadCapture("iperf2-tcp.txt").messages;
const reverse = loadCapture("iperf2-tcp-reverse.txt").messages;

function session(request: ConstructorParameters<typeof TcpClientSession>[1]) {
  const stream = new RecordingStream();
  const acks: number[] = [];
  const data: Uint8Array[] = [];
  const ends: number[] = [];
  const s = new TcpClientSession(stream, request, { ack: (a) => acks.push(a.version.high), data: (d) => data.push(d.slice()), end: (n) => ends.push(n) });
  return { s, stream, acks, data, ends };
}

describe("TCP client session", () => {
  test("writes the stock header first (iperf -c -p 20501 -t 1 -b 10M)", () => {
    const { s, stream } = session({ transport: "tcp", amount: { kind: "time", seconds: 1 }, rate: 10485760, listenPort: 20501 });
    s.start();
    expect(stream.written).toEqual(plain.find((m) => m.frame === 4)!.bytes);
  });

  test("the captured ack, split anywhere and followed by payload, is taken once and not counted", () => {
    const ack = plain.find((m) => m.length === 28)!.bytes;
    const payload = new TextEncoder().encode("0123456789");
    const both = new Uint8Array([...ack, ...payload]);
    for (const [a, b] of splits(both)) {
      const { s, acks, ends } = session({ transport: "tcp", amount: { kind: "time", seconds: 1 } });
      s.start();
      s.onData(a);
      s.onData(b);
      expect(acks).toEqual([0x00020001]);
      s.onEof();
      expect(ends).toEqual([payload.length]);
    }
  });

  test("-R: the server's digits are payload from the first byte", () => {
    const first = reverse.find((m) => m.srcPort === 20501)!.bytes;
    for (const [a, b] of splits(first)) {
      const { s, acks, data, ends } = session({ transport: "tcp", amount: { kind: "time", seconds: 1 }, direction: "reverse" });
      s.start();
      s.onData(a);
      s.onData(b);
      s.finish();
      s.onEof();
      expect(acks).toEqual([]);
      expect(ends).toEqual([first.length]);
      expect(Buffer.concat(data)).toEqual(Buffer.from(first));
    }
  });

  test("finish half-closes, EOF closes; a few bytes before EOF are still payload", () => {
    const { s, stream, ends } = session({ transport: "tcp", amount: { kind: "bytes", bytes: 10 } });
    s.start();
    s.finish();
    expect(stream.ended).toBe(true);
    s.onData(new Uint8Array([0, 0, 0, 2]));
    s.onEof();
    expect(stream.closed).toBe(true);
    expect(ends).toEqual([4]);
  });

  test("-C: no header at all", () => {
    const { s, stream } = session({ transport: "tcp", amount: { kind: "time", seconds: 1 }, extended: false });
    s.start();
    expect(stream.written.length).toBe(0);
    expect(s.header).toBeNull();
  });
});
