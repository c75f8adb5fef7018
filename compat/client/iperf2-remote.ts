/**
 * The far end of `anyperf client` against an iperf 2 server. Over TCP it reports nothing of its end (its ack carries
 * only its version, docs/protocols/iperf2.md §2.3), so the RemoteEnd names the peer and leaves every figure absent.
 * Over UDP each stream's FIN is answered with the server's report (§3.3): the bytes it received (FIN datagram
 * included, as it counts them), its time from first datagram to FIN, lost and out-of-order datagrams, the datagrams
 * the sender sent by their sequence, and its jitter.
 */
import { lossPercent, packetsPerSecond, throughputBps } from "../../src/formulas.ts";
import type { RemoteEnd, StreamFigures } from "../../src/report/result.ts";
import type { ServerReport } from "../../interop/iperf2/server-report.ts";
import { sumOf } from "./remote-sum.ts";

function reportFigures(id: number, r: ServerReport): StreamFigures {
  return {
    id,
    side: "recv",
    connections: 1,
    bytes: r.totalBytes,
    seconds: r.duration,
    throughput_bps: throughputBps(r.totalBytes, r.duration),
    packets: r.datagrams,
    packets_per_second: packetsPerSecond(r.datagrams, r.duration),
    lost: r.lost,
    loss_percent: lossPercent(r.lost, r.datagrams),
    out_of_order: r.outOfOrder,
    jitter_ms: r.jitter * 1000,
  };
}

/**
 * `reports`: the UDP server's report of each stream (index = stream), missing where none came back; `awaited`: how
 * many streams a report answers (UDP sent by us; 0 over TCP and when the server sent, which iperf 2 reports nothing of).
 */
export function iperf2Remote(reports: readonly (ServerReport | undefined)[], awaited: number, phases: RemoteEnd["phases"], version: string | undefined): RemoteEnd {
  const got = reports.flatMap((r, i) => (r ? [reportFigures(i + 1, r)] : []));
  const summary = got.length > 0 ? sumOf(got, true) : undefined;
  const missing = got.length < awaited ? [`the server reported ${got.length} of ${awaited} streams`] : [];
  return {
    role: "server",
    peer: { name: "iperf", ...(version !== undefined ? { version } : {}) },
    phases,
    ...(summary ? { summary } : {}),
    totals: summary ? { received_bytes: summary.bytes } : {},
    streams: got,
    cpu: {},
    errors: missing,
  };
}
