import { BB_FLAG } from "../../interop/iperf2/bounceback.ts";
import { BouncebackClientSession } from "../../interop/iperf2/bounceback-client-session.ts";
import { PolledPlane } from "../../src/engine/polled-plane.ts";
import type { StreamCounters } from "../../src/counters.ts";
import { NO_SAMPLES, type RunningStats, meanLatency, runningStatsAdd } from "../../src/formulas.ts";
import { defaultBuffers, setBuffers } from "../../src/host/socket-defaults.ts";
import { type Queued, SocketTransport, flushQueued, newQueued } from "../../src/net/write-queue.ts";
import { StreamSpec } from "../../src/stream-spec.ts";
import { Interrupted, unlessAborted } from "../../src/signals.ts";
import { UserError } from "../../src/errors.ts";
import { bouncebackBanner, bouncebackBin, bouncebackLine, bouncebackPdfLine, HEADER_BB } from "./bounceback-report.ts";
import { bouncebackNote } from "./bounceback-server.ts";
import type { ClientIo } from "./client.ts";
import { connectionNotes, withInterface } from "./connection-notes.ts";
import { csvTcpLine } from "./csv-report.ts";
import { iperf2Test } from "./iperf2-test.ts";
import type { ClientPlan } from "./plan.ts";
import { connectMain, initialTcp, resolveHost } from "./tcp-connect.ts";
import { TcpStatsTracker } from "./tcp-stats.ts";
import { connectionLine } from "./text-report.ts";
import { within } from "./waits.ts";

/** After our FIN, how long the server may take to close (stock servers close at once on EOF). */
const CLOSE_BOUND_MS = 5_000;
const CLOSE_AFTER_SIGNAL_MS = 1_000;

interface Conn extends Queued {
  session?: BouncebackClientSession;
}

/**
 * A window's round trips in seconds, as the Test counted them (count, Σ and Σ² of the times), with the min and max of
 * `own`: what the printed avg/stdev/RPS and /status share.
 */
function tripsOf(c: StreamCounters | undefined, own: Pick<RunningStats, "min" | "max">): RunningStats {
  if (!c || c.timed === 0) return NO_SAMPLES;
  return { count: c.timed, sum: c.latencySumUs / 1e6, sumSq: c.latencySqSumUs / 1e12, mean: meanLatency(c.latencySumUs, c.timed) / 1e6, min: own.min, max: own.max };
}

/** Epoch seconds and microseconds for the request's send stamp. */
function wallStamp(): { sec: number; usec: number } {
  const us = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  return { sec: Math.floor(us / 1e6) >>> 0, usec: us % 1e6 };
}

/**
 * `anyperf iperf -c HOST --bounceback ...`: one connection on the main thread (a request every few milliseconds at
 * most needs no Worker), driven by the interop session; its round trips are a PolledPlane of the engine's Test, which
 * cuts each interval and the final window, so /status and the printed lines count the same round trips. Nagle off,
 * TCP_QUICKACK re-armed after each request and -S set on the socket, each read back, as the stock client sets them.
 * Prints 2.1.8's lines: interval and final lines with the round trips' avg/min/max/stdev and RPS, and the histogram.
 */
export async function runBouncebackClient(plan: ClientPlan, io: ClientIo): Promise<number> {
  const bb = plan.bounceback!;
  const intervalS = plan.intervalS > 0 ? plan.intervalS : bb.defaultInterval ? 1 : 0;
  const durationS = plan.amount.kind === "time" ? plan.amount.seconds : 0;
  const server = { host: plan.host, port: plan.port };
  io.printer.info(
    ...bouncebackBanner({
      host: plan.host, port: plan.port, pid: process.pid, bb, tos: plan.tos,
      buffer: plan.window === undefined ? defaultBuffers.tcpSend() : setBuffers.send(plan.window), requested: plan.window,
    }),
  );
  const host = await resolveHost(plan.host, plan.ipv6);
  const conn: Conn = newQueued();
  // Nagle off, read back through libc; without libc (Deno, musl) the node-compatible adapter turns it off on every
  // socket it connects.
  const started = performance.now();
  const s = await unlessAborted(
    connectMain(io, { host, port: plan.port }, { sendBuffer: plan.window, mss: plan.mss, congestion: plan.congestion, noDelay: io.sockopt ? true : undefined, tos: plan.tos || undefined }, plan.bind && { host: plan.bind.host, port: plan.bind.port ?? 0 }, {
      data: conn,
      handlers: {
        data: (_s, d) => conn.session?.onData(d),
        drain: (c) => flushQueued(c),
        end: () => conn.session?.onEof(),
        close: () => conn.session?.onEof(),
        error: () => conn.session?.onEof(),
      },
    }),
    io.signal,
    (late) => late.terminate(),
  ).catch((e: unknown) => {
    throw e instanceof Interrupted ? new UserError(`interrupted while connecting to ${plan.host} port ${plan.port}`, 1) : e;
  });
  const connectMs = performance.now() - started;
  const fd = s.fd;
  const sockopt = io.sockopt;
  if (fd === undefined || !sockopt) io.warn("bounceback: TCP_QUICKACK and TCP_INFO not available: this runtime gives no access to the socket's options");
  const tcp = new TcpStatsTracker(() => (fd !== undefined ? sockopt?.tcpInfo(fd) : undefined));
  const local = { host: (fd !== undefined ? sockopt?.localAddress(fd)?.host : undefined) ?? s.localAddress?.replace(/^::ffff:/, "") ?? host, port: s.localPort ?? 0 };
  const notes = connectionNotes({ enhanced: true, sock: fd, init: initialTcp(sockopt, s), connectMs, at: new Date() });
  io.printer.info(connectionLine(1, withInterface(local, true), server, [bouncebackNote({ ...bb, bbFlags: bb.quickAck ? BB_FLAG.quickAck : 0 }), ...notes]));

  /** This interval's round trips, for their min and max: the counters hold those only as running levels. */
  let interval: RunningStats = NO_SAMPLES;
  const bins = new Map<number, number>();
  const outOfBounds = { low: 0, high: 0 };
  const spec = StreamSpec.parse({ kind: "rr-client", id: 0, transport: "tcp", connect: { host, port: plan.port }, requestSize: bb.size, responseSize: bb.replySize });
  const plane = new PolledPlane([spec], () => ({ bytes: session.sent + session.received, received: session.received, transactions: session.roundTrips, connections: 1 }));
  const test = iperf2Test({ role: "client", peer: server, transport: "tcp", durationS, intervalS, test: "rr" }, 1);
  const queued = new SocketTransport(s);
  let closed!: () => void;
  const peerClosed = new Promise<void>((r) => (closed = r));
  const session = new BouncebackClientSession(
    {
      write: (b) => queued.write(b),
      // A half-close, as stock's shutdown(SHUT_WR): a reply still in flight is read, not answered with a reset.
      end: () => {
        try {
          if (fd !== undefined && sockopt && conn.queue.length === 0) return sockopt.shutdownWrite(fd);
        } catch {
          // Already reset by the peer: the queued path's end() closes what is left.
        }
        queued.end();
      },
      close: () => queued.close(),
    },
    { nowMs: () => performance.now(), wall: wallStamp, at: (atMs, fn) => { const t = setTimeout(fn, Math.max(0, atMs - performance.now())); return () => clearTimeout(t); } },
    { ...bb, periodMs: bb.periodS * 1000, tos: plan.tos, durationMs: durationS * 1000 },
    {
      sent: () => {
        if (!bb.quickAck || fd === undefined || !sockopt) return;
        try {
          sockopt.apply(fd, { quickAck: true });
        } catch (e) {
          io.warn(`bounceback: ${e instanceof Error ? e.message : String(e)}`);
        }
      },
      roundTrip: (seconds) => {
        interval = runningStatsAdd(interval, seconds);
        plane.time(0, seconds * 1e6);
        const bin = bouncebackBin(seconds);
        if (bin === null) outOfBounds.high++;
        else bins.set(bin, (bins.get(bin) ?? 0) + 1);
      },
      closed: () => closed(),
      error: (e) => io.warn(`bounceback: ${e.message}`),
    },
  );
  conn.session = session;
  const startMs = performance.now();
  const startWall = Date.now();
  test.attach(plane, "send", startMs);
  test.cutsIntervals();
  const csvAt = (endS: number) => new Date(startWall + endS * 1000);
  const print = (start: number, end: number, bytes: number, trips: RunningStats, tcpStats = tcp.interval(), at = csvAt(end)) => {
    io.printer.report(HEADER_BB, bouncebackLine({ id: 1, start, end, bytes, trips, tcp: tcpStats }, plan.format));
    io.printer.csvLine(csvTcpLine({ at, client: local, server, id: 1, start, end, bytes, millis: true }));
  };
  let tick = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const printInterval = () => {
    const start = tick * intervalS;
    const end = ++tick * intervalS;
    const w = test.interval(startMs + end * 1000);
    const c = w.stream(plane, 0);
    print(start, end, c?.bytes ?? 0, tripsOf(c, interval));
    interval = NO_SAMPLES;
  };
  const arm = () => {
    const next = (tick + 1) * intervalS;
    // The interval that ends where the test does is printed (stock prints 0-1 before the final line of -t 1).
    if (durationS > 0 && next > durationS + 1e-9) return;
    timer = setTimeout(() => {
      printInterval();
      arm();
    }, Math.max(0, startMs + next * 1000 - performance.now()));
  };
  if (intervalS > 0) arm();
  session.start();
  await within(peerClosed, durationS > 0 ? durationS * 1000 : 2 ** 31 - 1, io.signal);
  // Time is up: a boundary on the end whose timer has not run yet (the same instant) comes before the final line.
  const timeUp = durationS > 0 && performance.now() - startMs >= durationS * 1000 - 5;
  if (intervalS > 0 && timeUp && (tick + 1) * intervalS <= durationS + 1e-9) printInterval();
  clearTimeout(timer);
  tcp.settle();
  session.stop();
  await within(peerClosed, io.signal.aborted ? CLOSE_AFTER_SIGNAL_MS : CLOSE_BOUND_MS, io.signal);
  test.end();
  s.terminate();
  const m = test.measured();
  const end = m.seconds;
  const lastAt = intervalS > 0 && tick > 0 ? csvAt(tick * intervalS) : csvAt(end);
  const c = m.stream(plane, 0);
  // From the streams' open, the levels are the whole test's min and max.
  const whole = c ? { ...NO_SAMPLES, min: c.latencyMinUs / 1e6, max: c.latencyMaxUs / 1e6 } : NO_SAMPLES;
  print(0, end, c?.bytes ?? 0, tripsOf(c, whole), tcp.final(), lastAt);
  io.printer.report(null, bouncebackPdfLine(1, 0, end, bins, outOfBounds));
  return 0;
}
