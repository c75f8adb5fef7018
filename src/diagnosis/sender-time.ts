import { bottleneckBps, queueingDelayUs, senderTimeShares } from "../formulas.ts";
import { formatFixed } from "../units.ts";
import type { SenderTime, TcpPath } from "./schema.ts";

/** What the sending sockets' chrono stats and RTTs say (formulas in src/formulas.ts). */
export interface PathReading {
  shares: SenderTime;
  bottleneck_bps?: number;
  queueing_delay_us?: number;
}

export function readPath(path: TcpPath, throughputBps: number): PathReading {
  const out: PathReading = { shares: senderTimeShares(path.elapsed_us, path.busy_us, path.rwnd_limited_us, path.sndbuf_limited_us) };
  if (path.delivery_bps !== undefined) out.bottleneck_bps = bottleneckBps(path.delivery_bps, throughputBps);
  if (path.srtt_us !== undefined && path.min_rtt_us !== undefined) out.queueing_delay_us = queueingDelayUs(path.srtt_us, path.min_rtt_us);
  return out;
}

const pc = (x: number) => `${formatFixed(x, 0)} %`;

/** "sender busy 96 % of the window: receive window 69 %, send buffer 7 %, network 24 % of it" */
export function senderTimeText(s: SenderTime): string {
  return `sender busy ${pc(s.busy_percent)} of the window: receive window ${pc(s.rwnd_limited_percent)}, send buffer ${pc(s.sndbuf_limited_percent)}, network ${pc(s.network_percent)} of it`;
}
