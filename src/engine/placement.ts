import type { StreamSpec } from "../stream-spec.ts";

/** Which way a stream moves bytes, seen from its Worker; "rr" is request/response, bound by latency, not bytes. */
export type Direction = "send" | "recv" | "both" | "rr";

/** Streams a Worker holds, by direction. */
export type WorkerLoad = Record<Direction, number>;

export function directionOf(spec: StreamSpec): Direction {
  switch (spec.kind) {
    case "tcp-send":
      return spec.countReceived ? "both" : "send";
    case "udp-send":
      return "send";
    case "tcp-recv":
    case "udp-recv":
      return "recv";
    case "rr-client":
    case "rr-server":
      return "rr";
  }
}

export const streamsOf = (l: WorkerLoad) => l.send + l.recv + l.both + l.rr;

const sends = (l: WorkerLoad) => l.send + l.both;
const receives = (l: WorkerLoad) => l.recv + l.both;

/** Streams of `l` that move bytes the other way from `dir` (a "both" stream goes the other way for every stream). */
const against = (l: WorkerLoad, dir: Direction) => (dir === "send" ? receives(l) : dir === "recv" ? sends(l) : dir === "both" ? sends(l) + l.recv : 0);

/** With a stream going `dir`, the Workers would hold senders and receivers. */
function mixed(loads: readonly WorkerLoad[], dir: Direction): boolean {
  if (dir === "send") return loads.some((l) => l.recv > 0);
  if (dir === "recv") return loads.some((l) => l.send > 0);
  return false;
}

/**
 * Where one more stream goes among the unpinned Workers' `loads`: an idle Worker while there is one; else, for a
 * sender where there are receivers or the other way round, a new Worker while the pool may grow ("grow"); else the
 * least loaded, ties to the one with the fewest streams going the other way.
 *
 * A stream alone on its Worker runs in blocking mode, and a Worker is one thread to the kernel's scheduler, which
 * shares the CPU out by thread. A sender that shares its Worker with a receiver gets one turn of the event loop per
 * turn of the receiver's, and with it half that thread's share: 2 TCP_STREAM + 2 TCP_MAERTS against our netserver on
 * 2 Workers sent 0.10–0.49 of what it received, stock netserver (a process per test) 0.86–1.35; on 4 Workers, one a
 * stream, 0.88–1.09 (docs/PERFORMANCE.md "Mixed directions"). One direction only, more Workers cost more than they
 * give: iperf3 -P 32 cost 0.57–0.77 s of server CPU per GB on 2 Workers, 0.85–1.8 on 4, so such a pool does not grow;
 * nor does it for streams that send and receive on one socket (iperf 2 --full-duplex), whose split is within the
 * stream: 4 Workers cost more per GB (0.80–1.0 s against 0.59–0.66) and left it as lopsided.
 */
export function place(loads: readonly WorkerLoad[], dir: Direction, canGrow: boolean): number | "grow" {
  const idle = loads.findIndex((l) => streamsOf(l) === 0);
  if (idle >= 0) return idle;
  if (loads.length === 0 || (canGrow && mixed(loads, dir))) return "grow";
  let best = 0;
  for (let i = 1; i < loads.length; i++) {
    const a = loads[i]!, b = loads[best]!;
    const d = streamsOf(a) - streamsOf(b);
    if (d < 0 || (d === 0 && against(a, dir) < against(b, dir))) best = i;
  }
  return best;
}
