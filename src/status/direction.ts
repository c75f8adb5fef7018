import type { BytesByDirection, StreamView } from "./schema.ts";

export type Direction = keyof BytesByDirection;

/**
 * Which way a stream's payload bytes went, seen from this process: a request/response stream counts its requests and
 * responses together (the engine's counters do not split them). Undefined where a stream does not say which end it is.
 */
export function directionOf(side: StreamView["side"]): Direction | undefined {
  switch (side) {
    case "send":
      return "sent";
    case "recv":
      return "received";
    case "client":
    case "server":
      return "both";
    case undefined:
      return undefined;
  }
}

export function noBytes(): BytesByDirection {
  return { sent: 0, received: 0, both: 0 };
}
