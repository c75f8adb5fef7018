import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { IntervalEvent } from "./schema.ts";
import type { StatusSource } from "./source.ts";

/** Frames a reader may leave unread before it is dropped: a stalled browser tab must not grow our memory. */
const MAX_UNREAD = 64;

/** SSE framing of one interval: JSON.stringify never emits a newline, so one data line suffices. */
export function intervalFrame(e: IntervalEvent): string {
  return `event: interval\nid: ${e.testId}:${e.seq}\ndata: ${JSON.stringify(e)}\n\n`;
}

/** GET /events: one `interval` event per interval of any test, for as long as the client stays. */
export function eventsHandler(source: StatusSource, opts: { heartbeatMs: number; maxClients: number }) {
  let clients = 0;
  return (c: Context) => {
    if (clients >= opts.maxClients) {
      return c.json({ error: `too many /events clients (${opts.maxClients}): close one, or poll /status` }, 503);
    }
    clients++;
    return streamSSE(c, async (stream) => {
      let unread = 0;
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const send = (frame: string) => {
        if (unread >= MAX_UNREAD) return finish();
        unread++;
        // StreamingApi.write resolves once the client has taken the frame, and swallows errors of a closed stream.
        void stream.write(frame).then(() => unread--);
      };
      const unsubscribe = source.subscribe((e) => send(intervalFrame(e)));
      const heartbeat = setInterval(() => send(": keep-alive\n\n"), opts.heartbeatMs);
      stream.onAbort(() => finish());
      // The first bytes go out at once so the client sees the response start, not a hang until the next interval.
      send("retry: 2000\n: anyperf interval events\n\n");
      try {
        await finished;
      } finally {
        clearInterval(heartbeat);
        unsubscribe();
        clients--;
      }
    });
  };
}
