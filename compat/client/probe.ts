/**
 * Which server answers at HOST:PORT, bounded in time: one connection, anyperf's hello, the first answer classified
 * (detect.ts), then the connection closed. A stock iperf3 server takes the hello for a cookie and a parameter block
 * that never completes; a stock iperf 2 server takes it for a test header, acks it and logs a 60-byte test; our close
 * ends either attempt and the server serves the next client as usual (an iperf 2 server once it has closed its side
 * and IPERF2_SETTLE_MS more have passed). A server still silent after the hello is sent
 * zeros up to a netperf request's size, which a netserver answers (its child for this connection then ends at our
 * close); an ntttcp receiver never answers and is not told apart.
 */
import { loadNet } from "../../src/net/net.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { connectTcp } from "../../src/worker/sockets.ts";
import type { TcpSocket } from "../../src/net/types.ts";
import { encodeFrame } from "../../src/native/protocol/framing.ts";
import { PROTOCOL_VERSION } from "../../src/native/protocol/messages.ts";
import { VERSION } from "../../src/version.ts";
import { MESSAGE_SIZE } from "../../interop/netperf/words.ts";
import { classifyAnswer, type Answer } from "./detect.ts";

export const PROBE_CONNECT_MS = 3_000;
export const PROBE_ANSWER_MS = 1_500;
/** How long the probe waits for an iperf 2 server to close its side after ours. */
export const PROBE_CLOSE_MS = 500;
/**
 * After an iperf 2 server's close, time for it to finish with the probe's test before the real test's connections
 * arrive: a stock iperf 2.1.8 server aborted ("malloc(): unsorted double linked list corrupted") in 4 of 12 runs of
 * `anyperf client HOST -P 2` when they came right after its close, in none of 12 (then 20) when they came 100 ms later.
 */
export const IPERF2_SETTLE_MS = 100;

export type ProbeOutcome = Answer | { peer: undefined; reason: string; refused?: boolean };

export async function probe(host: string, port: number, signal: AbortSignal): Promise<ProbeOutcome> {
  const [net, sockopt] = await Promise.all([loadNet(), loadSockopt()]);
  let got = new Uint8Array(0);
  let settle: (a: ProbeOutcome) => void = () => {};
  const answered = new Promise<ProbeOutcome>((r) => (settle = r));
  const closed = Promise.withResolvers<void>();
  let outcome: ProbeOutcome | undefined;
  const onData = (d: Uint8Array) => {
    const all = new Uint8Array(got.length + d.length);
    all.set(got);
    all.set(d, got.length);
    got = all.subarray(0, Math.min(all.length, 64));
    const a = classifyAnswer(got);
    if (a) settle(a);
  };
  const pending = connectTcp<undefined>({ net, sockopt }, { host, port }, undefined, {}, undefined, {
    data: (_s, d) => onData(d),
    close: () => {
      closed.resolve();
      settle(classifyAnswer(got) ?? { peer: undefined, reason: got.length ? "it closed the connection mid-answer" : "it closed the connection without answering" });
    },
    error: () => {},
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const within = <T>(p: Promise<T>, ms: number, late: T) => Promise.race([p, new Promise<T>((r) => (timer = setTimeout(() => r(late), ms)))]);
  const aborted = new Promise<ProbeOutcome>((r) => signal.addEventListener("abort", () => r({ peer: undefined, reason: "interrupted" }), { once: true }));
  let socket: TcpSocket<undefined> | undefined;
  try {
    const connected = await Promise.race([
      within(pending.then((s) => s as TcpSocket<undefined> | "timeout"), PROBE_CONNECT_MS, "timeout" as const),
      aborted.then(() => "interrupted" as const),
    ]).catch((e: unknown) => e as Error);
    clearTimeout(timer);
    if (connected === "timeout" || connected === "interrupted") {
      pending.then((s) => s.terminate(), () => {});
      return { peer: undefined, reason: connected === "timeout" ? `no connection within ${PROBE_CONNECT_MS / 1000} s` : "interrupted" };
    }
    if (connected instanceof Error) {
      const code = (connected as { code?: string }).code;
      return { peer: undefined, reason: code === "ECONNREFUSED" ? "connection refused" : connected.message, refused: code === "ECONNREFUSED" };
    }
    socket = connected;
    const hello = encodeFrame({ type: "hello", protocol: PROTOCOL_VERSION, tool: "anyperf", version: VERSION, probe: true });
    socket.write(hello);
    const silent = { peer: undefined, reason: "silent" } as const;
    const first = await Promise.race([within(answered, PROBE_ANSWER_MS, silent), aborted]);
    clearTimeout(timer);
    if (first !== silent) return (outcome = first);
    socket.write(new Uint8Array(MESSAGE_SIZE - hello.length));
    const reason = `no answer to a hello, nor to a netperf request, within ${(2 * PROBE_ANSWER_MS) / 1000} s`;
    return await Promise.race([within(answered, PROBE_ANSWER_MS, { peer: undefined, reason }), aborted]);
  } finally {
    clearTimeout(timer);
    socket?.end();
    if (socket && outcome?.peer === "iperf") {
      await within(closed.promise, PROBE_CLOSE_MS, undefined);
      clearTimeout(timer);
      await new Promise((r) => setTimeout(r, IPERF2_SETTLE_MS));
    }
  }
}
