/**
 * A stock server's streams as one figure, for the RemoteEnd of `anyperf client` against iperf3 and iperf 2: bytes and
 * packets summed, loss summed when every stream reported it, jitter their mean (as iperf3's [SUM] and iperf 2's
 * per-stream reports leave it).
 */
import { lossPercent, packetsPerSecond, throughputBps } from "../../src/formulas.ts";
import type { Figures, StreamFigures } from "../../src/report/result.ts";

/** Streams summed over the longest of their windows; UDP jitter is the streams' mean, as iperf3's [SUM] prints it. */
export function sumOf(streams: StreamFigures[], udp: boolean): Figures {
  const bytes = streams.reduce((a, s) => a + s.bytes, 0);
  const seconds = Math.max(0, ...streams.map((s) => s.seconds));
  const f: Figures = { bytes, seconds, throughput_bps: throughputBps(bytes, seconds) };
  if (udp) {
    const packets = streams.reduce((a, s) => a + (s.packets ?? 0), 0);
    f.packets = packets;
    f.packets_per_second = packetsPerSecond(packets, seconds);
    if (streams.every((s) => s.lost !== undefined)) {
      f.lost = streams.reduce((a, s) => a + (s.lost ?? 0), 0);
      f.loss_percent = lossPercent(f.lost, packets);
      f.jitter_ms = streams.reduce((a, s) => a + (s.jitter_ms ?? 0), 0) / Math.max(1, streams.length);
    }
    if (streams.length > 0 && streams.every((s) => s.out_of_order !== undefined)) f.out_of_order = streams.reduce((a, s) => a + s.out_of_order!, 0);
  }
  const retrans = streams.filter((s) => s.retransmits !== undefined);
  if (retrans.length > 0) f.retransmits = retrans.reduce((a, s) => a + s.retransmits!, 0);
  return f;
}
