/**
 * The 92-byte header a --trip-times client opens each TCP write (burst) with (docs/protocols/iperf2.md §2.7), as
 * the engine's StampedBursts framing reads it: the burst's whole size at 48, the client's write time (wall clock,
 * seconds then microseconds, big-endian) at 20.
 */
export const TCP_BURST_HEADER = { headerBytes: 92, sizeAt: 48, stampAt: 20 } as const;
