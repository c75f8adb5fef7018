import { z } from "zod";
import { SocketOptions } from "./stream-spec.ts";

/** Streams one test may open (-P, and a native test's request): issue 20 asks for 10,000 flows. */
export const MAX_STREAMS = 10_000;

/**
 * The native plan: what `anyperf loopback` (and later native client/server modes) asks the engine to do. Dialects
 * produce their own plans and turn them into StreamSpecs; this one covers the native CLI.
 */
export const Plan = z
  .object({
    transport: z.enum(["tcp", "udp"]).default("tcp"),
    test: z.enum(["stream", "rr", "crr"]).default("stream"),
    host: z.string().default("127.0.0.1"),
    /** 0 = ephemeral ports, one per receiving stream. */
    port: z.number().int().min(0).max(65535).default(0),
    family: z.enum(["any", "ipv4", "ipv6"]).default("any"),
    streams: z.number().int().min(1).max(MAX_STREAMS),
    /** Workers per side; default min(streams, cores). */
    workers: z.number().int().min(1).max(256).optional(),
    durationS: z.number().positive().max(86400).default(5),
    /** Total payload bytes to send (-n), split over the streams; the run then ends when they are sent. 0 = by time. */
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
    warmupS: z.number().min(0).max(3600).default(0),
    cooldownS: z.number().min(0).max(3600).default(0),
    intervalS: z.number().min(0.1).max(60).default(1),
    /** TCP write/read size. */
    bufferBytes: z.number().int().min(1).max(64 << 20).default(128 * 1024),
    /** UDP datagram size. */
    datagramBytes: z.number().int().min(1).max(65507).default(1400),
    /** Per-stream target; 0 = unlimited. */
    bitsPerSecond: z.number().min(0).default(0),
    packetsPerSecond: z.number().min(0).default(0),
    requestBytes: z.number().int().min(1).max(1 << 20).default(1),
    responseBytes: z.number().int().min(1).max(1 << 20).default(1),
    /** --rr over TCP: start a transaction at most every this many ms (a paced latency probe); 0 = back to back. */
    transactionGapMs: z.number().min(0).max(60_000).default(0),
    socket: SocketOptions.default({}),
  })
  .refine((p) => !(p.transport === "udp" && p.test === "crr"), { message: "--crr needs TCP: drop --udp" });
export type Plan = z.infer<typeof Plan>;
export type PlanInput = z.input<typeof Plan>;
