import type { LinkFacts } from "../host/link-facts.ts";
import type { HostWindow } from "../host/window.ts";
import type { Results } from "../report/result.ts";
import type { DiagnosisInput, EndHost, TcpPath } from "./schema.ts";

export interface DiagnosisSources {
  /** This end's Results (the client's, in a native run). */
  local: Results;
  /** The other end's host window over the same measured window (the Results' remote.cpu.host). */
  remoteHost?: HostWindow;
  /** The other end's sending sockets' TCP_INFO over the window (the Results' remote.tcp_path). */
  remotePath?: TcpPath;
  /** This end sent the data (a client without -R). */
  localSends: boolean;
  /** The link to the peer, as this end sees it (src/host/link.ts readLink). */
  link: LinkFacts;
  /** One stream's window ceiling (src/host/link-buffers.ts streamWindowBytes). */
  windowBytes?: number;
  /** The -b rate, bits/s. */
  targetBps?: number;
}

function endHost(w: HostWindow | undefined): EndHost {
  const out: EndHost = {};
  if (w?.cores !== undefined) out.cores = w.cores;
  if (w?.perCpu !== undefined) out.perCpu = w.perCpu;
  if (w?.tcp !== undefined) out.tcp = w.tcp;
  if (w?.process !== undefined) out.process = w.process;
  if (w?.cgroup !== undefined) out.cgroup = w.cgroup;
  return out;
}

/** diagnose()'s input from what both ends measured over one window. */
export function diagnosisInput(s: DiagnosisSources): DiagnosisInput {
  const r = s.local;
  const local = endHost(r.cpu.host);
  const remote = endHost(s.remoteHost);
  const sender = s.localSends ? local : remote;
  const input: DiagnosisInput = {
    transport: r.transport,
    test: r.test,
    throughput_bps: r.summary.throughput_bps,
    streams: Math.max(1, new Set(r.streams.map((st) => st.id)).size),
    link: s.link,
    sender,
    receiver: s.localSends ? remote : local,
  };
  // RTT and retransmits are the sending sockets' TCP_INFO; the receiver's own would describe the ACK path.
  const rtt = r.sender?.rtt_us ?? r.summary.rtt_us;
  if (rtt !== undefined && rtt > 0) input.rtt_us = rtt;
  const retransmits = r.retransmits ?? r.sender?.retransmits;
  if (retransmits !== undefined) input.retransmits = retransmits;
  if (sender.tcp?.outSegs !== undefined) input.segments_sent = sender.tcp.outSegs;
  const loss = r.summary.loss_percent ?? r.receiver?.loss_percent;
  if (loss !== undefined && loss >= 0) input.loss_percent = loss;
  const tps = r.summary.transactions_per_second;
  if (r.test !== "stream" && tps !== undefined) input.transactions_per_second = tps;
  const p50 = r.summary.latency_us?.p50;
  if (r.test !== "stream" && p50 !== undefined && p50 > 0) input.latency_p50_us = p50;
  const path = s.localSends ? r.tcp_path : s.remotePath;
  if (path !== undefined) input.path = path;
  if (s.windowBytes !== undefined) input.window_bytes = s.windowBytes;
  if (s.targetBps !== undefined && s.targetBps > 0) input.target_bps = s.targetBps;
  if (r.sender !== undefined) input.sent_bps = r.sender.throughput_bps;
  return input;
}
