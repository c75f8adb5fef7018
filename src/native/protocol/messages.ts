import { z } from "zod";
import { RemoteEnd } from "../../report/result.ts";
import { MAX_STREAMS } from "../../plan.ts";
import type { FrameDecoder } from "./framing.ts";

/**
 * The messages of anyperf's own control protocol (docs/native-protocol.md), one zod schema per message and direction:
 * each end parses what the other sends with these, so a field out of bounds is a refused message, never a value.
 */

/** Bumped on any change a peer of the previous version would misread; peers of another version are refused. */
export const PROTOCOL_VERSION = 1;
/** Longest text field a peer may send (reasons, tokens). */
const TEXT = 1024;
const Port = z.number().int().min(1).max(65535);

/** What the client asks the server's end to do; the client's own end is the mirror image. */
export const TestRequest = z.strictObject({
  transport: z.enum(["tcp", "udp"]),
  test: z.enum(["stream", "rr", "crr"]),
  /** forward: the client sends; reverse: the server sends; bidir: both (stream tests only). */
  direction: z.enum(["forward", "reverse", "bidir"]),
  streams: z.number().int().min(1).max(MAX_STREAMS),
  /** 0 = until the byte count is sent. */
  durationS: z.number().min(0).max(86400),
  /** Total payload bytes each sending end moves (split over its streams); 0 = by time. */
  bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  warmupS: z.number().min(0).max(3600),
  cooldownS: z.number().min(0).max(3600),
  bufferBytes: z.number().int().min(1).max(64 << 20),
  datagramBytes: z.number().int().min(1).max(65507),
  bitsPerSecond: z.number().min(0).max(1e15),
  packetsPerSecond: z.number().min(0).max(1e12),
  requestBytes: z.number().int().min(1).max(1 << 20),
  responseBytes: z.number().int().min(1).max(1 << 20),
  /**
   * -w: SO_SNDBUF and SO_RCVBUF for every data socket of both ends. Optional, so a request without it is still
   * protocol 1; sent only when set, so a server of an older release refuses only a -w it cannot honour.
   */
  windowBytes: z.number().int().min(1).max(512 << 20).optional(),
});
export type TestRequest = z.infer<typeof TestRequest>;

export const ClientMessage = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("hello"),
    protocol: z.number().int().min(0).max(65535),
    tool: z.literal("anyperf"),
    version: z.string().max(64),
    token: z.string().max(TEXT).optional(),
    /** Only asking what serves the port (`anyperf client` finding its peer): welcomed, then closed without a word. */
    probe: z.literal(true).optional(),
  }),
  /** `clientPorts`: where the client's receivers listen (reverse, bidir), one per stream. */
  z.strictObject({ type: z.literal("test"), test: TestRequest, clientPorts: z.array(Port).max(MAX_STREAMS) }),
  /** Start sending (both ends' senders start on this). */
  z.strictObject({ type: z.literal("go") }),
  /** The client's measured window starts or ends now: the server cuts its counters at the same moments. */
  z.strictObject({ type: z.literal("window"), edge: z.enum(["start", "end"]) }),
  /** Sent every ALIVE_EVERY_MS while a test runs, so a silent client is told from a dead one. */
  z.strictObject({ type: z.literal("alive") }),
  /** The client's senders stopped: drain, stop, and send your results. */
  z.strictObject({ type: z.literal("finish") }),
  z.strictObject({ type: z.literal("error"), message: z.string().max(TEXT) }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

export const ServerMessage = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("welcome"), protocol: z.number().int().min(0).max(65535), version: z.string().max(64) }),
  /** A no (version, token, limit, busy) in one line the client prints as it is; the server closes after it. */
  z.strictObject({ type: z.literal("refused"), reason: z.string().max(TEXT) }),
  /** Where the server's receivers (or RR servers) listen, one per stream; empty when it only sends. */
  z.strictObject({ type: z.literal("ready"), ports: z.array(Port).max(MAX_STREAMS) }),
  /** The server has cut its window start: without warm-up the client starts sending only now, so none is missed. */
  z.strictObject({ type: z.literal("started") }),
  z.strictObject({
    type: z.literal("results"),
    results: RemoteEnd.extend({ streams: RemoteEnd.shape.streams.max(2 * MAX_STREAMS), errors: z.array(z.string().max(TEXT)).max(64) }),
  }),
  z.strictObject({ type: z.literal("error"), message: z.string().max(TEXT) }),
]);
export type ServerMessage = z.infer<typeof ServerMessage>;

export const ALIVE_EVERY_MS = 2_000;

/**
 * The messages in `bytes`, each checked against its direction's schema; the first framing or schema failure ends
 * the list with a one-line reason (the session then ends: nothing after a bad frame can be trusted).
 */
export function decodeMessages<S extends z.ZodType>(decoder: FrameDecoder, bytes: Uint8Array, schema: S, from: "client" | "server"): { messages: z.infer<S>[]; error?: string } {
  const { frames, error } = decoder.push(bytes);
  const messages: z.infer<S>[] = [];
  for (const f of frames) {
    const m = schema.safeParse(f);
    if (!m.success) {
      const issue = m.error.issues[0];
      return { messages, error: `bad message from the ${from}: ${issue?.path.join(".") || "message"}: ${issue?.message}` };
    }
    messages.push(m.data);
  }
  return { messages, error: error?.message };
}
