/**
 * The native server: anyperf's own control protocol (src/native/protocol/, docs/native-protocol.md) on one TCP port, many
 * clients at once. Each control connection is its own session and test; a slow, silent or hostile client ends at its
 * own deadline and holds nothing another client needs.
 */
import { explainSocketError } from "../errors.ts";
import { loadNet } from "../net/net.ts";
import { QueuedWriter } from "../net/queued-writer.ts";
import type { TcpListener, TcpSocket } from "../net/types.ts";
import { loadSockopt } from "../sockopt/sockopt.ts";
import { WorkerPool } from "../engine/worker-pool.ts";
import { VERSION } from "../version.ts";
import { RefusalLog } from "../access/refusal-log.ts";
import { peerText, plainAddress } from "../access/peer-text.ts";
import { POLICY_FLAGS, busyMessage, checkTest, peerAllowed, policyLimits, rateExceeded, type ServerPolicy } from "../access/server-policy.ts";
import { ServerSession, type ServerEvent } from "./protocol/server-session.ts";
import type { TestRequest } from "./protocol/messages.ts";
import { ServerTest } from "./server-test.ts";

export const NATIVE_DEFAULT_PORT = 5300;

/** How often sessions look at their deadlines. */
const CHECK_MS = 250;
/** Past the time a test asked for (warm-up + duration + cool-down), how long it may go on before it is ended. */
const OVERRUN_S = 30;

interface Conn {
  /** The peer as log lines name it, kept from accept (a closed socket no longer knows it). */
  who?: string;
  session?: ServerSession;
  writer?: QueuedWriter;
  test?: ServerTest;
}

export interface NativeServerOptions {
  host?: string;
  port: number;
  token?: string;
  policy: ServerPolicy;
  log?: (line: string) => void;
}

/** Why a request is refused by this server's limits, in one line naming the limit's flag; undefined = fine. */
function limitRefusal(policy: ServerPolicy, req: TestRequest): string | undefined {
  const streams = req.streams * (req.direction === "bidir" ? 2 : 1);
  const limits = policyLimits(policy);
  const rateBps = req.bitsPerSecond * streams;
  const refusal = checkTest(limits, { streams, durationS: req.durationS > 0 ? req.warmupS + req.durationS + req.cooldownS : undefined, rateBps });
  return refusal?.message;
}

/**
 * A test that asked for no rate is held to --max-rate by what it moves: the mean over its measured window, once that
 * is RATE_CHECK_S long (as iperf3's --server-bitrate-limit ends unlimited tests). What counts is the server's
 * reporting side: what it receives (what it sends, with -R).
 */
const RATE_CHECK_S = 2;

function overRate(policy: ServerPolicy, t: ServerTest): string | undefined {
  const limit = policyLimits(policy).maxRateBps;
  const now = t.run.current();
  if (!limit || t.req.test !== "stream" || t.req.bitsPerSecond > 0 || !now || now.seconds < RATE_CHECK_S) return undefined;
  if (now.sum.throughput_bps <= limit.value) return undefined;
  return `${rateExceeded(limit, now.sum.throughput_bps, Math.round(now.seconds * 10) / 10)}: pass -b`;
}

export async function startNativeServer(opts: NativeServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const net = await loadNet();
  const sockopt = await loadSockopt();
  WorkerPool.shared();
  const log = opts.log ?? (() => {});
  const refusals = new RefusalLog((line) => log(`anyperf native: ${line}`));
  const conns = new Set<TcpSocket<Conn>>();
  const running = new Set<ServerTest>();
  let nextTest = 1;
  const maxTests = policyLimits(opts.policy).maxTests;

  const onEvent = (s: TcpSocket<Conn>, e: ServerEvent): void => {
    const session = s.data.session!;
    const who = s.data.who ?? "?";
    switch (e.kind) {
      case "test": {
        const limit = limitRefusal(opts.policy, e.test);
        const busy = !limit && maxTests && running.size >= maxTests.value ? busyMessage(maxTests, running.size) : undefined;
        const why = limit ?? busy;
        if (why) {
          refusals.refused(`refused ${who}: ${why}`);
          return session.refuse(`server refused the test: ${why}: ${limit ? "ask for less, or raise the limit on the server" : "try again when a test has ended"}`);
        }
        const peerHost = plainAddress(s.remoteAddress ?? "");
        const t = new ServerTest(nextTest++, e.test, { host: peerHost, port: s.remotePort ?? 0 });
        s.data.test = t;
        running.add(t);
        const listenHost = opts.host ?? (peerHost.includes(":") ? "::" : "0.0.0.0");
        log(`anyperf native: test ${t.id} from ${who}: ${e.test.transport} ${e.test.test} ${e.test.direction}, ${e.test.streams} stream(s)`);
        t.prepare(listenHost, e.clientPorts, sockopt).then(
          (ports) => session.accept(ports, performance.now()),
          (err: Error) => session.refuse(`server could not set up the test: ${err.message}`),
        );
        return;
      }
      case "go":
        s.data.test?.go();
        return;
      case "window":
        s.data.test?.window(e.edge);
        return;
      case "finish": {
        const t = s.data.test;
        if (!t) return;
        t.finish().then(
          (r) => {
            running.delete(t);
            const moved = t.req.test === "stream"
              ? `${r.totals.received_bytes ?? 0} bytes received, ${r.totals.sent_bytes ?? 0} sent`
              : `${r.totals.transactions ?? 0} transactions answered`;
            log(`anyperf native: test ${t.id} from ${who} done: ${moved}`);
            session.sendResults(r);
          },
          (err: Error) => session.abort(`server failed to finish: ${err.message}`),
        );
        return;
      }
      case "closed": {
        const t = s.data.test;
        if (!t) return refusals.refused(`closed ${who}: ${e.reason}`);
        running.delete(t);
        void t.stop();
        log(`anyperf native: test ${t.id} from ${who} ended: ${e.reason}`);
        return;
      }
    }
  };

  // One clock for every session's deadline and every test's overrun.
  const ticker = setInterval(() => {
    const now = performance.now();
    for (const s of conns) {
      s.data.session?.check(now);
      const t = s.data.test;
      const req = t?.req;
      if (t && req && t.run.phase !== "done") {
        const allowed = req.durationS > 0 ? req.warmupS + req.durationS + req.cooldownS + OVERRUN_S : opts.policy.maxDurationS;
        const why =
          allowed !== undefined && (now - t.createdMs) / 1000 > allowed
            ? req.durationS > 0 ? `test ran ${OVERRUN_S} s past the time it asked for` : `test ran longer than this server allows (${POLICY_FLAGS.maxDurationS} ${allowed})`
            : overRate(opts.policy, t);
        if (why) {
          refusals.refused(`ended ${s.data.who}: ${why}`);
          s.data.session?.abort(why);
        }
      }
    }
  }, CHECK_MS);

  const host = opts.host ?? "::";
  let listener: TcpListener;
  try {
    listener = net.listen<Conn>({
      hostname: host,
      port: opts.port,
      data: {},
      socket: {
        open: (s) => {
          s.data = { who: peerText(s.remoteAddress, s.remotePort) };
          if (!peerAllowed(s.remoteAddress, opts.policy)) {
            refusals.refused(`refused ${s.data.who}: not in --allow`);
            s.end();
            return;
          }
          conns.add(s);
          s.data.writer = new QueuedWriter(s as TcpSocket<unknown>);
          s.data.session = new ServerSession(s.data.writer, (e) => onEvent(s, e), { version: VERSION, token: opts.token, nowMs: performance.now() });
        },
        data: (s, d) => s.data.session?.receive(d, performance.now()),
        drain: (s) => s.data.writer?.drain(),
        close: (s) => {
          conns.delete(s);
          s.data.session?.eof();
        },
        error: () => {},
      },
    });
  } catch (e) {
    clearInterval(ticker);
    throw explainSocketError(e, { host, port: opts.port, role: "listen" });
  }

  return {
    port: listener.port,
    async close() {
      clearInterval(ticker);
      listener.stop(true);
      for (const s of conns) s.data.session?.abort("the server is shutting down");
      await Promise.all([...running].map((t) => t.stop()));
    },
  };
}
