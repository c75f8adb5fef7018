/** Where diagnose() draws its lines; each one's reason beside it. */

/** Goodput at or above this share of the link speed fills it: headers and ACKs take most of the rest. */
export const LINK_FULL_PERCENT = 90;

/** A core at or above this busy share has no room left: the thread or the interrupts on it wait for it. */
export const CORE_SATURATED_PERCENT = 90;

/**
 * A saturated core whose task time (user, nice, system) exceeds all of anyperf's own CPU on that host (all threads,
 * % of one core) by at least this much is held by another program: anyperf could not have spent it, wherever its
 * threads ran.
 */
export const FOREIGN_LOAD_PERCENT = 50;

/**
 * In flight (throughput × RTT) at or above this share of the streams' socket buffers means the window is reached:
 * Linux advertises only part of a receive buffer as window (the rest pays for skb overhead, tcp_adv_win_scale),
 * about half at an MTU of 1500.
 */
export const WINDOW_REACHED_FRACTION = 0.5;

/** UDP datagrams lost at or above this %: more than a congested moment; the path or the receiver drops. */
export const UDP_LOSS_HIGH_PERCENT = 1;

/** TCP segments retransmitted at or above this %: each loss halves a Reno/CUBIC window, so 1 % costs throughput. */
export const RETRANSMIT_HIGH_PERCENT = 1;

/** Throughput at or above this share of the -b target: the sender's own pacing was the limit. */
export const TARGET_REACHED_PERCENT = 95;

/**
 * A TCP sender whose socket was busy (data written and not yet acknowledged) at least this share of the window kept
 * the path supplied; below it the application left the socket idle (its pace, or a sender that could not keep up).
 */
export const SENDER_BUSY_PERCENT = 80;

/** A share of the sender's busy time at or above this (more than all the rest) names what held it. */
export const LIMIT_SHARE_PERCENT = 50;

/**
 * Goodput at or above this share of the path's bottleneck rate (delivery rate) fills the path: headers, ACKs and the
 * delivery rate's per-round-trip peaks take the rest.
 */
export const PATH_FULL_PERCENT = 80;

/**
 * A cgroup that ran out of its CPU quota in at least this share of its periods held its process: each throttled
 * period stops every thread of it until the next (100 ms by default), far longer than a socket buffer lasts.
 */
export const CGROUP_THROTTLED_PERCENT = 25;

/**
 * A request/response flow runs one transaction at a time: when the two ends' CPU per transaction is at least this
 * share of its median round trip, their processing (system calls, wake-ups) sets the rate, not the path.
 */
export const RR_HOST_SHARE_PERCENT = 50;
