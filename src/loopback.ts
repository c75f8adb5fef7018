import type { Plan } from "./plan.ts";
import { receivers, senders } from "./plan-streams.ts";
import { DataPlane } from "./engine/data-plane.ts";
import { TestRun } from "./engine/test-run.ts";
import { WorkerPool, cores } from "./engine/worker-pool.ts";
import type { Results } from "./report/result.ts";
import { loadSockopt } from "./sockopt/sockopt.ts";
import { socketBuffers } from "./native/socket-buffers.ts";
import { FlowWatch } from "./flows.ts";

/**
 * The self-test: receivers and senders in this one process over 127.0.0.1 (or the given host), each side on its
 * own Workers, measured like any other test.
 */
export async function runLoopback(plan: Plan, hooks: { signal?: AbortSignal; onRun?: (run: TestRun) => void } = {}): Promise<Results> {
  WorkerPool.shared({ workers: plan.workers ?? Math.min(plan.streams * 2, Math.max(2, cores())) });
  const run = new TestRun(
    { mode: "loopback", role: "both", peer: plan.host, transport: plan.transport, test: plan.test },
    { warmupS: plan.warmupS, durationS: plan.bytes > 0 ? 0 : plan.durationS, cooldownS: plan.cooldownS, intervalS: plan.intervalS },
  );
  hooks.onRun?.(run);
  // Workers still starting count towards the flows' memory: a few KiB per flow at 10,000 flows, most of it at one.
  const flows = new FlowWatch(plan.streams);
  const rx = await DataPlane.open(receivers(plan, { host: plan.host, canSetOptions: (await loadSockopt()) !== undefined, sendersHere: true }));
  run.attach(rx, plan.test === "stream" ? "recv" : "server");
  let tx: DataPlane;
  try {
    tx = await DataPlane.open(senders(plan, { host: plan.host, ports: rx.localPorts.map((p) => p!) }));
  } catch (e) {
    await rx.stop();
    throw e;
  }
  run.attach(tx, plan.test === "stream" ? "send" : "client");
  tx.go();
  try {
    await run.runTimed(hooks.signal);
    flows.measured();
  } finally {
    await tx.stop();
    // In-flight data (TCP bytes in socket buffers, datagrams in the receive queue) lands before receivers stop;
    // TCP receivers end by themselves on the senders' FIN. RR servers hold nothing in flight.
    const drainMs = plan.test !== "stream" ? 0 : plan.transport === "udp" ? 200 : 2_000;
    await Promise.race([rx.ended, new Promise((r) => setTimeout(r, drainMs))]);
    await rx.stop();
    run.finish();
  }
  const buffers = socketBuffers(plan.socket.sendBuffer, { send: tx, recv: rx });
  const r = run.results();
  const targetBps = plan.bitsPerSecond * plan.streams;
  return { ...r, ...(buffers ? { socket_buffers: buffers } : {}), ...(targetBps > 0 ? { target_bps: targetBps } : {}), flows: flows.figures(r.streams) };
}
