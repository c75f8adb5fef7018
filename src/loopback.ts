import type { Plan } from "./plan.ts";
import type { StreamSpecInput } from "./stream-spec.ts";
import { DataPlane } from "./engine/data-plane.ts";
import { TestRun } from "./engine/test-run.ts";
import { WorkerPool, cores } from "./engine/worker-pool.ts";
import type { Results } from "./report/result.ts";
import { loadSockopt } from "./sockopt/sockopt.ts";

/** anyperf's own datagram header needs 16 bytes; smaller datagrams go unstamped and loss is sent − received. */
const STAMP_BYTES = 16;
const UDP_RECV_BUFFER = 4 << 20;

function receivers(plan: Plan, canSetOptions: boolean): StreamSpecInput[] {
  const listen = { host: plan.host, port: 0 };
  const options = plan.socket;
  return Array.from({ length: plan.streams }, (_, id): StreamSpecInput => {
    const port = plan.port ? plan.port + id : 0;
    const at = { ...listen, port };
    if (plan.test !== "stream") {
      return { kind: "rr-server", id, transport: plan.transport, listen: at, requestSize: plan.requestBytes, responseSize: plan.responseBytes, closeAfterResponse: plan.test === "crr", options };
    }
    if (plan.transport === "udp") {
      // A bigger receive queue rides out scheduling hiccups of the receiving Worker (iperf3's FAQ says the same: -w 2M).
      const udpOptions = canSetOptions ? { recvBuffer: UDP_RECV_BUFFER, ...options } : options;
      return { kind: "udp-recv", id, listen: at, datagramSize: Math.max(plan.datagramBytes, 1), format: plan.datagramBytes >= STAMP_BYTES ? "anyperf" : "none", options: udpOptions };
    }
    return { kind: "tcp-recv", id, listen: at, connections: 1, readSize: plan.bufferBytes, options };
  });
}

function senders(plan: Plan, ports: number[]): StreamSpecInput[] {
  const options = plan.socket;
  const rate = { bitsPerSecond: plan.bitsPerSecond || undefined, packetsPerSecond: plan.packetsPerSecond || undefined };
  return ports.map((port, id): StreamSpecInput => {
    const connect = { host: plan.host, port };
    if (plan.test !== "stream") {
      return { kind: "rr-client", id, transport: plan.transport, connect, requestSize: plan.requestBytes, responseSize: plan.responseBytes, perTransactionConnect: plan.test === "crr", options };
    }
    if (plan.transport === "udp") {
      return { kind: "udp-send", id, connect, datagramSize: plan.datagramBytes, format: plan.datagramBytes >= STAMP_BYTES ? "anyperf" : "none", rate, options };
    }
    return { kind: "tcp-send", id, connect, writeSize: plan.bufferBytes, rate, options };
  });
}

/**
 * The self-test: receivers and senders in this one process over 127.0.0.1 (or the given host), each side on its
 * own Workers, measured like any other test.
 */
export async function runLoopback(plan: Plan, hooks: { signal?: AbortSignal; onRun?: (run: TestRun) => void } = {}): Promise<Results> {
  WorkerPool.shared({ workers: plan.workers ?? Math.min(plan.streams * 2, Math.max(2, cores())) });
  const run = new TestRun(
    { mode: "loopback", role: "both", peer: plan.host, transport: plan.transport, test: plan.test },
    { warmupS: plan.warmupS, durationS: plan.durationS, cooldownS: plan.cooldownS, intervalS: plan.intervalS },
  );
  hooks.onRun?.(run);
  const rx = await DataPlane.open(receivers(plan, (await loadSockopt()) !== undefined));
  run.attach(rx, plan.test === "stream" ? "recv" : "server");
  let tx: DataPlane;
  try {
    tx = await DataPlane.open(senders(plan, rx.localPorts.map((p) => p!)));
  } catch (e) {
    await rx.stop();
    throw e;
  }
  run.attach(tx, plan.test === "stream" ? "send" : "client");
  tx.go();
  try {
    await run.runTimed(hooks.signal);
  } finally {
    await tx.stop();
    // In-flight data (TCP bytes in socket buffers, datagrams in the receive queue) lands before receivers stop;
    // TCP receivers end by themselves on the senders' FIN. RR servers hold nothing in flight.
    const drainMs = plan.test !== "stream" ? 0 : plan.transport === "udp" ? 200 : 2_000;
    await Promise.race([rx.ended, new Promise((r) => setTimeout(r, drainMs))]);
    await rx.stop();
    run.finish();
  }
  return run.results();
}
