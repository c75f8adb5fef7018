/**
 * The far end of `anyperf client --peer netperf`: the netserver's results message (docs/protocols/netperf.md §5.1) —
 * what it received and sent over its own elapsed time, its transactions, its host's CPU (-C), its data socket's
 * buffer sizes at the end and its retransmits — as anyperf's RemoteEnd. What netserver does not report (per-CPU modes,
 * TCP_INFO, its process's CPU) stays absent.
 */
import { packetsPerSecond, throughputBps, transactionsPerSecond } from "../../src/formulas.ts";
import type { Plan } from "../../src/plan.ts";
import type { Direction } from "../../src/native/request.ts";
import type { Figures, RemoteEnd } from "../../src/report/result.ts";
import type { OmniResults } from "../../interop/netperf/omni-results.ts";

/** The netperf test a native plan is. */
export function netperfTest(plan: Pick<Plan, "test" | "transport">, direction: Direction): string {
  if (plan.test === "crr") return "TCP_CRR";
  if (plan.test === "rr") return plan.transport === "udp" ? "UDP_RR" : "TCP_RR";
  if (plan.transport === "udp") return "UDP_STREAM";
  return direction === "reverse" ? "TCP_MAERTS" : "TCP_STREAM";
}

export function netperfRemote(res: OmniResults, plan: Pick<Plan, "test" | "transport" | "socket">, direction: Direction, phases: RemoteEnd["phases"]): RemoteEnd {
  const seconds = res.elapsedTime;
  const rr = plan.test !== "stream";
  const sends = !rr && direction === "reverse";
  const bytes = rr ? res.bytesReceived + res.bytesSent : sends ? res.bytesSent : res.bytesReceived;
  const f: Figures = { bytes, seconds, throughput_bps: throughputBps(bytes, seconds) };
  if (rr) {
    f.transactions = res.transReceived;
    f.transactions_per_second = transactionsPerSecond(res.transReceived, seconds);
  } else if (plan.transport === "udp") {
    f.packets = res.recvCalls;
    f.packets_per_second = packetsPerSecond(res.recvCalls, seconds);
  }
  if (sends && res.transportRetrans >= 0) f.retransmits = res.transportRetrans;
  const w = plan.socket.sendBuffer;
  return {
    role: "server",
    peer: { name: "netperf" },
    phases,
    summary: f,
    streams: [{ ...f, id: 0, side: rr ? "server" : sends ? "send" : "recv", connections: 1 }],
    totals: { sent_bytes: res.bytesSent, received_bytes: res.bytesReceived, ...(rr ? { transactions: res.transReceived } : {}) },
    // cpuMethod 0: the netserver did not measure (no -C granted), so its zeros are no figure.
    cpu: res.cpuMethod !== 0 ? { busy_percent: res.cpuUtil } : {},
    retransmits: f.retransmits,
    ...(w !== undefined ? { socket_buffers: { requested_bytes: w, ...(res.sendBufSize >= 0 ? { send_bytes: res.sendBufSize } : {}), ...(res.recvBufSize >= 0 ? { receive_bytes: res.recvBufSize } : {}) } } : {}),
    errors: res.servErrno !== 0 ? [`the netserver reported errno ${res.servErrno}`] : [],
  };
}
