/**
 * What the iperf3 reports are made from: one side's view of a test, shaped like iperf3's own test/stream/interval
 * records so the formatters can follow iperf_print_intermediate / iperf_print_results line by line. The glue fills
 * it from the engine's counters and the peer's results document.
 */

/** This side's role on the test (iperf3's test->mode). */
export type Mode = "sender" | "receiver" | "bidir";

/** One reporting interval of one stream (iperf3's iperf_interval_results). */
export interface IntervalResult {
  /** Seconds since the stream's start (TEST_START, or the end of omit). */
  startS: number;
  endS: number;
  /** iperf3 keeps this one in a float. */
  durationS: number;
  bytes: number;
  omitted: boolean;
  /** TCP sender with TCP_INFO. */
  retransmits: number;
  sndCwnd: number;
  sndWnd: number;
  rttUs: number;
  rttvarUs: number;
  pmtu: number;
  /** UDP: datagrams in this interval (sender: sent; receiver: advance of the highest sequence number). */
  packets: number;
  /** UDP receiver: lost datagrams in this interval, out-of-order ones, and the running jitter (s). */
  lost: number;
  outOfOrder: number;
  jitterS: number;
}

/** One stream: identity, its intervals, and the totals both sides know at the end (iperf3's iperf_stream). */
export interface ReportStream {
  /** iperf3 stream id (1, 3, 4, ...). */
  id: number;
  /** The number iperf3 prints in "[  5]": its socket fd. */
  socket: number;
  /** This side sends on it. */
  sender: boolean;
  localHost: string;
  localPort: number;
  remoteHost: string;
  remotePort: number;
  intervals: IntervalResult[];
  /** Sent by this side, or by the peer as its results tell (omit excluded). */
  bytesSent: number;
  bytesReceived: number;
  /** UDP: datagrams sent by this side, or highest sequence seen, since the start (omit included). */
  packetCount: number;
  /** The peer's packet count from its results. */
  peerPacketCount: number;
  omittedPacketCount: number;
  /** UDP receiver figures: from our counters on a receive stream, from the peer's results on a send stream. */
  cntError: number;
  omittedCntError: number;
  outOfOrder: number;
  omittedOutOfOrder: number;
  jitterS: number;
  /** TCP sender figures (own TCP_INFO, or the peer's results for a receive stream). */
  retransmits: number;
  maxSndCwnd: number;
  maxSndWnd: number;
  maxRttUs: number;
  minRttUs: number;
  meanRttUs: number;
  /** This side's stream duration (start, or end of omit, to the stop). */
  endTimeS: number;
  /** The peer's duration from its results (end_time - start_time); 0 when unknown. */
  peerTimeS: number;
}

export interface ReportTest {
  role: "client" | "server";
  protocol: "tcp" | "udp";
  mode: Mode;
  /** Streams per direction (-P). */
  numStreams: number;
  /** -f letter for rates; "a" adaptive bits. */
  unitFormat: string;
  /** Interval length asked for (-i), for the "short interval without data" rule. */
  statsIntervalS: number;
  verbose: boolean;
  /** iperf3's test->sender_has_retransmits at print time (1, 0 or -1) and the peer's in bidir mode. */
  senderHasRetransmits: number;
  otherSideHasRetransmits: number;
  streams: ReportStream[];
  /** Process CPU over the test, percent of one core: total, user, system. */
  cpu: [number, number, number];
  remoteCpu: [number, number, number];
  congestionUsed?: string;
  remoteCongestionUsed?: string;
  /** --get-server-output on the client: the server's text or JSON report. */
  serverOutputText?: string;
  serverOutputJson?: Record<string, unknown>;
  getServerOutput: boolean;
}
