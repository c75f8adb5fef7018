import { describe, expect, test } from "bun:test";
import { clientJson, nativeServers } from "./harness.ts";
import { FrameDecoder, encodeFrame } from "../../src/native/protocol/framing.ts";
import { PROTOCOL_VERSION } from "../../src/native/protocol/messages.ts";
import { concatBytes } from "../../lib/bytes.ts";

const start = nativeServers();

/** Sends `bytes` on a raw connection; resolves with what came back once the server closed it (or after `ms`). */
async function poke(port: number, bytes: Uint8Array, ms = 8_000): Promise<{ reply: Uint8Array; closedAfterMs: number | undefined }> {
  const parts: Uint8Array[] = [];
  const t0 = performance.now();
  let closedAt: number | undefined;
  let closed!: () => void;
  const done = new Promise<void>((r) => (closed = r));
  const s = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, d) => void parts.push(d.slice()),
      close: () => {
        closedAt = performance.now() - t0;
        closed();
      },
    },
  });
  if (bytes.length) s.write(bytes);
  await Promise.race([done, new Promise((r) => setTimeout(r, ms))]);
  s.terminate();
  return { reply: concatBytes(parts), closedAfterMs: closedAt };
}

const hello = encodeFrame({ type: "hello", protocol: PROTOCOL_VERSION, tool: "anyperf", version: "0.1.0" });

describe("native server: a bad or idle peer never wedges it", () => {
  test("garbage, an oversized length, a bad message: an error frame, then closed at once", async () => {
    await start(31030);
    for (const bytes of [new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"), Uint8Array.of(0x41, 0x50, 0x7f, 0xff, 0xff, 0xff), concatBytes([hello, encodeFrame({ type: "test", test: {}, clientPorts: [] })])]) {
      const { reply, closedAfterMs } = await poke(31030, bytes);
      expect(closedAfterMs).toBeLessThan(1000);
      const frames = new FrameDecoder().push(reply).frames as { type: string; message?: string }[];
      expect(frames.at(-1)?.type).toBe("error");
    }
  });

  test("a connection that says nothing is closed at the handshake deadline; one that stops after its hello too", async () => {
    await start(31031);
    const silent = await poke(31031, new Uint8Array(0), 8_000);
    expect(silent.closedAfterMs).toBeGreaterThan(4_500);
    expect(silent.closedAfterMs).toBeLessThan(6_500);
    const halfway = await poke(31031, hello, 8_000);
    expect(halfway.closedAfterMs).toBeGreaterThan(4_500);
    expect((new FrameDecoder().push(halfway.reply).frames as { type: string }[]).map((f) => f.type)).toEqual(["welcome", "error"]);
  });

  test("while bad peers hang around, a real client is served", async () => {
    await start(31032);
    const bad = [poke(31032, new Uint8Array(0), 3_000), poke(31032, hello, 3_000), poke(31032, Uint8Array.of(0x41), 3_000)];
    const r = await clientJson(["-p", "31032", "-t", "1"]);
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
    await Promise.all(bad);
  });

  test("-R toward client ports nobody listens on: refused, naming the way out; the server goes on", async () => {
    await start(31033);
    const req = {
      transport: "tcp", test: "stream", direction: "reverse", streams: 1, durationS: 1, bytes: 0, warmupS: 0, cooldownS: 0,
      bufferBytes: 131072, datagramBytes: 1400, bitsPerSecond: 0, packetsPerSecond: 0, requestBytes: 1, responseBytes: 1,
    };
    const { reply, closedAfterMs } = await poke(31033, concatBytes([hello, encodeFrame({ type: "test", test: req, clientPorts: [31034] })]));
    expect(closedAfterMs).toBeLessThan(5000);
    const frames = new FrameDecoder().push(reply).frames as { type: string; reason?: string }[];
    expect(frames.map((f) => f.type)).toEqual(["welcome", "refused"]);
    expect(frames[1]!.reason).toMatch(/could not connect back to 127\.0\.0\.1 for -R\/--bidir .*let this server reach the client's ephemeral ports, or drop -R\/--bidir/);
    const r = await clientJson(["-p", "31033", "-t", "0.5"]);
    expect(r.remote!.totals.received_bytes).toBe(r.totals.sent_bytes!);
  });
});
