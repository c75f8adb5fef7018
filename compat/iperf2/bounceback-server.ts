import { BB_FLAG, type BbStamp, type BouncebackHeader } from "../../interop/iperf2/bounceback.ts";
import { BouncebackServerSession } from "../../interop/iperf2/bounceback-server-session.ts";
import { hasFlag } from "../../interop/iperf2/flags.ts";
import type { TcpSocket } from "../../src/net/types.ts";
import { type Queued, SocketTransport } from "../../src/net/write-queue.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { SocketOptions } from "../../src/stream-spec.ts";
import type { ServerPlan } from "./plan.ts";
import type { Printer } from "./printer.ts";
import { csvTcpLine, finalCsvTime } from "./csv-report.ts";
import { type Endpoint, HEADER_BW, bwLine } from "./text-report.ts";

export interface BouncebackConn extends Queued {
  bounceback?: BouncebackServerSession;
}

export interface BouncebackIo {
  sockopt: Sockopt | undefined;
  printer: Printer;
  warn(text: string): void;
}

/** Epoch seconds and microseconds: the client subtracts its own wall-clock stamps from these. */
function wallClock(): BbStamp {
  const us = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  return { sec: Math.floor(us / 1e6) >>> 0, usec: us % 1e6 };
}

/**
 * "(bb w/quickack len/hold=100/0)", as the 2.1.8 server notes a bounceback connection (we answer as 2.1.8); a
 * reply size of its own, which only 2.2 clients ask for, in 2.2.1's words: "(bb w/quickack req/reply/hold=100/300/0)".
 */
export function bouncebackNote(h: Pick<BouncebackHeader, "bbFlags" | "size" | "replySize" | "holdUs">): string {
  const qa = hasFlag(h.bbFlags, BB_FLAG.quickAck) ? " w/quickack" : "";
  return h.replySize === h.size ? `(bb${qa} len/hold=${h.size}/${h.holdUs})` : `(bb${qa} req/reply/hold=${h.size}/${h.replySize}/${h.holdUs})`;
}

/**
 * Serves a `--bounceback` connection on the main thread (a request every few milliseconds at most needs no Worker):
 * Nagle off as stock servers do, the client's TOS and TCP_QUICKACK applied and read back; each reply re-arms
 * quickack, which the kernel clears by itself. Prints the connection line once the first request names the sizes,
 * and the bytes both ways when the client ends.
 */
export function serveBounceback(
  s: TcpSocket<BouncebackConn>,
  pending: Uint8Array,
  plan: ServerPlan,
  io: BouncebackIo,
  hooks: { line(extra: string[]): void; id: number; startMs: number; client: Endpoint; server: Endpoint; done(): void },
): { stop(graceMs: number): void } {
  const fd = s.fd;
  const apply = (opts: SocketOptions, what: string): void => {
    if (fd === undefined || io.sockopt === undefined) {
      io.warn(`bounceback: ${what} not applied: this runtime gives no access to the socket's options`);
      return;
    }
    io.sockopt.apply(fd, opts);
  };
  let quickAck = false;
  let headed = false;
  /** `at`: the interval's wall-clock time for -y C; null on the final line without -i, as stock 2.1.8 prints it. */
  const line = (start: number, end: number, bytes: number, at: Date | null = new Date()): void => {
    if (!headed) io.printer.info(HEADER_BW);
    headed = true;
    io.printer.info(bwLine({ id: hooks.id, start, end, bytes }, plan.format));
    io.printer.csvLine(csvTcpLine({ at, client: hooks.client, server: hooks.server, id: hooks.id, start, end, bytes, millis: plan.enhanced }));
  };
  // -i: the bytes of each interval, both directions, from the accept on (as the stock server's interval lines).
  let shown = { at: 0, bytes: 0 };
  const both = () => session.received + session.written;
  let tick: ReturnType<typeof setTimeout> | undefined;
  /** After our half-close, the close that follows if the client never closes its side. */
  let unanswered: ReturnType<typeof setTimeout> | undefined;
  const every = plan.intervalS;
  const arm = (): void => {
    const at = shown.at + every;
    tick = setTimeout(() => {
      line(shown.at, at, both() - shown.bytes);
      shown = { at, bytes: both() };
      arm();
    }, Math.max(0, hooks.startMs + at * 1000 - performance.now()));
  };
  const session = new BouncebackServerSession(
    new SocketTransport(s),
    { now: wallClock, after: (us, fn) => void setTimeout(fn, us / 1000) },
    {
      started: (h) => {
        quickAck = hasFlag(h.bbFlags, BB_FLAG.quickAck);
        const opts: SocketOptions = { noDelay: true };
        if (hasFlag(h.bbFlags, BB_FLAG.tos)) opts.tos = h.tos & 0xff;
        if (quickAck) opts.quickAck = true;
        try {
          apply(opts, "TCP_NODELAY/TOS/TCP_QUICKACK");
        } catch (e) {
          io.warn(`bounceback: ${e instanceof Error ? e.message : String(e)}`);
        }
        hooks.line([bouncebackNote(h)]);
      },
      replied: () => {
        if (!quickAck || fd === undefined) return;
        try {
          io.sockopt?.apply(fd, { quickAck: true });
        } catch (e) {
          // The client may have closed between our write and here: this reply's quickack no longer matters.
          quickAck = false;
          io.warn(`bounceback: ${e instanceof Error ? e.message : String(e)}`);
        }
      },
      end: (received, written) => {
        clearTimeout(tick);
        clearTimeout(unanswered);
        const seconds = (performance.now() - hooks.startMs) / 1000;
        if (every > 0 && seconds > shown.at) line(shown.at, seconds, both() - shown.bytes);
        // Stock servers count both directions: requests read plus replies written (2.1.8 and 2.2.1 alike).
        line(0, seconds, received + written, finalCsvTime(plan.intervalS));
        hooks.done();
      },
      error: (e) => {
        clearTimeout(tick);
        clearTimeout(unanswered);
        io.warn(`dropped bounceback connection: ${e.message}`);
        hooks.done();
      },
    },
  );
  s.data.bounceback = session;
  if (every > 0) arm();
  session.onData(pending);
  return {
    /** Ends the test from our side (a server limit): a half-close the client answers with its own close. */
    stop: (graceMs) => {
      session.stop();
      try {
        if (fd === undefined || io.sockopt === undefined) throw new Error("this runtime gives no access to the socket");
        io.sockopt.shutdownWrite(fd);
      } catch (e) {
        io.warn(`bounceback: closing at once, no half-close: ${e instanceof Error ? e.message : String(e)}`);
        session.onEof();
        return;
      }
      unanswered = setTimeout(() => session.onEof(), graceMs);
    },
  };
}
