/**
 * A stream host: owns whole streams (their sockets and event-loop work) and writes their counters into shared
 * memory; the main thread only sends open/go/stop and reads counters. Each data Worker runs one
 * (src/worker/data-worker.ts); where sockets cannot cross threads the main thread runs one of its own
 * (src/engine/local-host.ts).
 */
import { StreamContext, type Runner } from "./context.ts";
import type { FromWorker, ToWorker } from "./messages.ts";
import type { StreamSpec } from "../stream-spec.ts";
import type { WorkerEnv } from "./sockets.ts";
import { TcpInfoSampler } from "./tcp-info-sampler.ts";
import { TcpSender } from "./tcp-send.ts";
import { TcpReceiver } from "./tcp-recv.ts";
import { UdpSender } from "./udp-send.ts";
import { UdpReceiver } from "./udp-recv.ts";
import { RrClient } from "./rr-client.ts";
import { RrServer } from "./rr-server.ts";
import { PollGroup } from "./poll-group.ts";

interface Entry {
  /** A TCP receiver or an unpaced sender that only writes: what the Worker's PollGroup serves. */
  bulk: boolean;
  runner: Runner;
  ctx: StreamContext;
  idle?: ReturnType<typeof setInterval>;
  tcpInfo?: TcpInfoSampler;
}

const TCP_INFO_EVERY_MS = 1000;

function makeRunner(spec: StreamSpec, ctx: StreamContext, env: WorkerEnv): Runner {
  switch (spec.kind) {
    case "tcp-send":
      return new TcpSender(spec, ctx, env);
    case "tcp-recv":
      return new TcpReceiver(spec, ctx, env);
    case "udp-send":
      return new UdpSender(spec, ctx, env);
    case "udp-recv":
      return new UdpReceiver(spec, ctx, env);
    case "rr-client":
      return new RrClient(spec, ctx, env);
    case "rr-server":
      return new RrServer(spec, ctx, env);
  }
}

const isBulk = (spec: StreamSpec) =>
  spec.kind === "tcp-recv" || (spec.kind === "tcp-send" && !spec.countReceived && !spec.rate.bitsPerSecond && !spec.rate.packetsPerSecond);

const errorOf = (e: unknown) => ({ message: e instanceof Error ? e.message : String(e), code: (e as { code?: string } | null)?.code });

/** The host's message handler; `env` (the socket API, options, blocking I/O) is the thread's own. */
export function createStreamHost(postNow: (m: FromWorker) => void, loadEnv: () => Promise<Omit<WorkerEnv, "streamsHere" | "pollGroup">>): (m: ToWorker) => void {
  // What one turn posts crosses as one message: a go, a TCP_INFO round or a stop of 5,000 streams was 5,000 messages,
  // each a task on the main thread (at 10,000 flows, 10,000 a second for TCP_INFO alone).
  // Only the bulk kinds wait for the turn's end: an event or an end goes at once (after what is queued, in order),
  // since a stream's last datagrams and its end must reach the main thread before the test's last cut.
  let queued: FromWorker[] = [];
  const flush = () => {
    if (queued.length === 0) return;
    const messages = queued;
    queued = [];
    postNow(messages.length === 1 ? messages[0]! : { t: "batch", messages });
  };
  const post = (m: FromWorker) => {
    if (m.t === "tcp-info" || m.t === "buffers" || m.t === "opened") {
      if (queued.push(m) === 1) queueMicrotask(flush);
      return;
    }
    flush();
    postNow(m);
  };
  const bulkOnly = () => {
    for (const streams of planes.values()) for (const e of streams.values()) if (!e.bulk) return false;
    return true;
  };
  const envReady: Promise<WorkerEnv> = loadEnv().then((env) => ({
    ...env,
    streamsHere: () => {
      let n = 0;
      for (const streams of planes.values()) n += streams.size;
      return n;
    },
    pollGroup: env.io && env.sockopt ? new PollGroup(env.io, env.sockopt, bulkOnly) : undefined,
  }));

  let tcpInfoTimer: ReturnType<typeof setInterval> | undefined;

  /** One timer per Worker reads TCP_INFO of every TCP stream it owns; it runs only while there are such streams. */
  function sampleTcpInfo(): void {
    let any = false;
    for (const streams of planes.values()) {
      for (const e of streams.values()) {
        if (!e.tcpInfo || !e.runner.tcpFds) continue;
        any = true;
        e.tcpInfo.sample(e.runner.tcpFds());
      }
    }
    if (!any && tcpInfoTimer) {
      clearInterval(tcpInfoTimer);
      tcpInfoTimer = undefined;
    }
  }
  /** plane → stream → entry */
  const planes = new Map<number, Map<number, Entry>>();

  async function open(m: Extract<ToWorker, { t: "open" }>): Promise<void> {
    const env = await envReady;
    const ctx = new StreamContext(m.plane, m.stream, m.counters, m.histograms, post);
    const runner = makeRunner(m.spec, ctx, env);
    let streams = planes.get(m.plane);
    if (!streams) planes.set(m.plane, (streams = new Map()));
    // Release the listener and sockets of a stream that ended by itself, so a server's ports are free for the next test.
    ctx.onEnd = () => queueMicrotask(() => void stop(m.plane, m.stream));
    const entry: Entry = { bulk: isBulk(m.spec), runner, ctx, tcpInfo: env.sockopt && runner.tcpFds ? new TcpInfoSampler(env.sockopt, ctx) : undefined };
    if (entry.tcpInfo) tcpInfoTimer ??= setInterval(sampleTcpInfo, TCP_INFO_EVERY_MS);
    streams.set(m.stream, entry);
    try {
      const { localPort, fd } = await runner.open();
      post({ t: "opened", plane: m.plane, stream: m.stream, localPort, fd });
      if (m.go) start(entry);
    } catch (e) {
      streams.delete(m.stream);
      post({ t: "failed", plane: m.plane, stream: m.stream, error: errorOf(e) });
      ctx.silence();
      void runner.stop().catch(() => {});
      return;
    }
    const idle = m.spec.idleTimeoutMs;
    if (idle > 0) {
      // A peer that stops sending must not hold the stream (and with it a server slot) forever.
      entry.idle = setInterval(() => {
        if (ctx.ended) return clearInterval(entry.idle);
        if (ctx.idleForMs() > idle) {
          clearInterval(entry.idle);
          ctx.end("idle");
          void runner.stop();
        }
      }, Math.min(1000, idle));
    }
  }

  function start(e: Entry): void {
    // A first look while the connections are fresh: a stream whose peer closes first still has one at the end.
    if (e.tcpInfo && e.runner.tcpFds) e.tcpInfo.sample(e.runner.tcpFds());
    try {
      e.runner.go();
    } catch (err) {
      e.ctx.end("error", err);
    }
  }

  async function stop(plane: number, stream?: number): Promise<void> {
    const streams = planes.get(plane);
    if (!streams) return;
    const targets = stream === undefined ? [...streams.keys()] : [stream];
    await Promise.all(
      targets.map(async (id) => {
        const e = streams.get(id);
        if (!e) return;
        streams.delete(id);
        if (e.idle) clearInterval(e.idle);
        // Last look before the sockets go, so short tests still report their retransmits.
        if (e.tcpInfo && e.runner.tcpFds) e.tcpInfo.sample(e.runner.tcpFds());
        try {
          await e.runner.stop();
        } catch (err) {
          e.ctx.end("error", err);
        }
        e.ctx.end("stopped");
      }),
    );
    if (streams.size === 0) planes.delete(plane);
  }

  return (m: ToWorker) => {
    switch (m.t) {
      case "open":
        void open(m);
        break;
      case "go":
        for (const e of planes.get(m.plane)?.values() ?? []) start(e);
        break;
      case "stop":
        void stop(m.plane, m.stream);
        break;
      case "pause":
        for (const e of planes.get(m.plane)?.values() ?? []) e.runner.pause?.();
        break;
      case "send":
        planes.get(m.plane)?.get(m.stream)?.runner.send?.(m.bytes, m.to);
        break;
      case "pin":
        // A refused pin (CPU outside this process's set) leaves the Worker unpinned and says so; the test goes on.
        void envReady
          .then((env) => env.sockopt?.pinThread(m.cpu))
          .catch((e: Error) => post({ t: "log", message: `anyperf: ${e.message}` }));
        break;
    }
  };
}
