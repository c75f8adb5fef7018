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
 *
 * The first stream of a test (`firstOfTest`) that finds every Worker busy gets a new one while the pool may grow:
 * another test is another client process or thread, and the stock servers give each its own (netserver forks per
 * test, iperf 2 a thread per connection). On 2 cores, 4 × TCP_STREAM against our netserver on 2 Workers: the server's
 * threads had a third of the CPU samples and moved 35 Gbit/s; on 4, 38-40, as the stock netserver (whose 4 processes
 * had two thirds). One test's further streams (iperf3 -P 32, one client thread in 3.12) share: 8 Workers there made
 * 28 Gbit/s against 32-34 on 2 (docs/PERFORMANCE.md "Wake-ups").
 */
export function place(loads: readonly WorkerLoad[], dir: Direction, canGrow: boolean, firstOfTest = false): number | "grow" {
  const idle = loads.findIndex((l) => streamsOf(l) === 0);
  if (idle >= 0) return idle;
  if (loads.length === 0) return "grow";
  if (dir === "rr") return placeRr(loads, canGrow);
  // Bulk streams keep off Workers that answer requests while there is another.
  const free = loads.flatMap((l, i) => (l.rr === 0 ? [i] : []));
  if (canGrow && (firstOfTest || mixed(loads, dir) || free.length === 0)) return "grow";
  return leastBy(loads, free, (a, b) => {
    const d = streamsOf(a) - streamsOf(b);
    return d < 0 || (d === 0 && against(a, dir) < against(b, dir));
  });
}

/** The first of `candidates` (all Workers when there are none) that no other is `better` than. */
function leastBy(loads: readonly WorkerLoad[], candidates: readonly number[], better: (a: WorkerLoad, b: WorkerLoad) => boolean): number {
  const from = candidates.length > 0 ? candidates : loads.map((_, i) => i);
  let best = from[0]!;
  for (const i of from.slice(1)) if (better(loads[i]!, loads[best]!)) best = i;
  return best;
}

const bulk = (l: WorkerLoad) => l.send + l.recv + l.both;

/**
 * A request/response stream waits, each transaction, for whatever else its Worker is doing: beside bulk streams its
 * latency is theirs (flent's RRUL against our netserver: UDP_RR 99th percentile 40-106 ms where the stock netserver,
 * a process per test, gave 0.3). So it goes with other request/response streams only: a Worker without bulk
 * streams, else a new one while the pool may grow, else the one with the fewest bulk streams.
 */
function placeRr(loads: readonly WorkerLoad[], canGrow: boolean): number | "grow" {
  const rrOnly = loads.flatMap((l, i) => (bulk(l) === 0 ? [i] : []));
  if (rrOnly.length === 0 && canGrow) return "grow";
  return leastBy(loads, rrOnly, (a, b) => bulk(a) < bulk(b) || (bulk(a) === bulk(b) && streamsOf(a) < streamsOf(b)));
}
