/**
 * A stock server that stops mid-test (killed, crashed, its host gone) leaves no trace in an iperf 2 TCP test: the
 * stock client sees a reset or an early EOF and prints its shorter figures as if all were well. anyperf client
 * compares what ran with what was asked, and names the drop.
 */

/** A -t test may end this much before its -t and still be whole (the server counts its -t from its own accept). */
export const SHORT_SLACK_S = 0.25;
export const SHORT_SLACK_FRACTION = 0.05;

/**
 * The error line for a run that ended before what it asked for, or undefined when it ran whole. `asked`: -t seconds,
 * or -n bytes (then the time is not checked); `ran`: the measured window's seconds and the bytes it moved.
 */
export function shortRun(peer: string, asked: { durationS: number; bytes: number }, ran: { seconds: number; bytes: number }): string | undefined {
  if (asked.bytes > 0) {
    if (ran.bytes >= asked.bytes) return undefined;
    return `${peer} ended the test after ${ran.bytes} of the ${asked.bytes} bytes asked (-n): it stopped or was killed mid-test; the figures cover what moved`;
  }
  if (ran.seconds >= asked.durationS - Math.max(SHORT_SLACK_S, asked.durationS * SHORT_SLACK_FRACTION)) return undefined;
  return `${peer} ended the test after ${ran.seconds.toFixed(2)} s of the ${asked.durationS} s asked (-t): it stopped or was killed mid-test; the figures cover those ${ran.seconds.toFixed(2)} s`;
}
