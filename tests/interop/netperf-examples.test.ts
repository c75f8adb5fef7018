import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { finish, hasStockNetperf, netserverPair, oursNetperf, stockNetperf, withoutStockTimerRace } from "./netperf-harness.ts";

/**
 * Issue 25 item 6: the command lines of netperf 2.7.0's own doc/examples scripts (runemomni.sh, runemomniagg2.sh,
 * bloat.sh, tcp_range_script, tcp_stream_script, udp_stream_script, tcp_rr_script, udp_rr_script,
 * packet_byte_script) give the stock pair's output shape with anyperf on either side: stock netperf against
 * `anyperf netserver`, and `anyperf netperf` against stock netserver, each beside stock netperf against stock
 * netserver. Lengths and iteration counts are cut to keep each run near a second (`-l 1`, `-i 3,3`); `-H 127.0.0.1`
 * stands for the scripts' data host. Ports picked free in 37300-37399.
 */

const available = hasStockNetperf();
const LIMIT_MS = 60_000;
const BASE = available ? freePorts(37300, 37400, 2) : 0;
const [STOCK, OURS] = [BASE, BASE + 1];
const UUID = "01234567-89ab-cdef-0123-456789abcdef";

/** The scripts' netperf command lines after `netperf -H HOST -p PORT`, by the script they come from. */
const LINES: [string, string][] = [
  ["runemomni.sh TCP_STREAM autotuning", "-P 1 -T 0,0 -t omni -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -m 64K"],
  ["runemomni.sh TCP_STREAM socket sizes", "-P 0 -T 0,0 -t omni -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -m 64K"],
  ["runemomni.sh TCP bidirectional", "-P 1 -T 0,0 -t omni -f m -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -r 64K -b 12"],
  ["runemomni.sh TCP_RR", "-P 1 -T 0,0 -t omni -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -r 1"],
  ["runemomni.sh TCP burst requests", "-P 1 -T 0 -t omni -f m -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -r 64 -b 4 -D"],
  ["runemomni.sh UDP burst requests", "-P 1 -T 0 -t omni -f m -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -r 64 -b 4 -T udp"],
  ["runemomni.sh UDP_STREAM", "-P 1 -T 0 -t omni -f m -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -m 64 -T udp"],
  ["runemomniagg2.sh uuid", "-t uuid"],
  ["runemomniagg2.sh outbound", `-t omni -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -m 64K -u ${UUID}`],
  ["runemomniagg2.sh inbound", `-t omni -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -M ,64K -u ${UUID}`],
  ["runemomniagg2.sh bidirectional", `-t omni -f m -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -s 1M -S 1M -r 64K -b 12 -u ${UUID}`],
  ["runemomniagg2.sh burst TCP_RR", `-t omni -f x -c -C -l 1 -i 3,3 -- -o all -H 127.0.0.1 -r 1 -b 4 -D -u ${UUID}`],
  ["bloat.sh TCP_RR", "-l 2 -t TCP_RR -D -0.5 -v 2 -- -r 1"],
  ["bloat.sh TCP_STREAM", "-l 2 -t TCP_STREAM -D 0.25 -v 2 -- -m 1K"],
  ["tcp_range_script", "-l 1 -t TCP_STREAM -i 3,2 -I 99,3 -- -m 1 -s 32768 -S 32768"],
  ["tcp_stream_script", "-l 1 -t TCP_STREAM -c -C -i 3,2 -I 99,3 -- -m 4096 -s 57344 -S 57344"],
  ["udp_stream_script", "-l 1 -i 3,2 -I 99,3 -t UDP_STREAM -- -m 1024 -s 32768 -S 32768"],
  ["udp_rr_script", "-l 1 -i 3,2 -I 99,3 -t UDP_RR -P 0 -- -r 1,1 -s 32768 -S 32768"],
  ["tcp_rr_script", "-l 1 -i 3,2 -I 99,3 -t TCP_RR -- -r 1,1 -s 32768 -S 32768"],
  ["packet_byte_script MSS", "-t TCP_MSS -P 0 -v 0"],
  ["tcp_stream_script -c", "-t LOC_CPU"],
  ["tcp_stream_script -C", "-t REM_CPU"],
];

/**
 * What the scripts read, without the figures: numbers, UUIDs and netperf's own variable parts (its confidence
 * warning, which depends on the run's spread; how many interim lines a loaded host fits in) taken out.
 */
function shape(text: string): string {
  return withoutStockTimerRace(text)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "UUID")
    .replace(/-?\d+(\.\d+)?/g, "N")
    .replace(/ +/g, " ")
    .split("\n")
    .filter((l) => !l.startsWith("!!!"))
    .filter((l, i, all) => !(l.startsWith("Interim result:") && all[i - 1] === l))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");
}

netserverPair(STOCK, OURS, available);

describe.skipIf(!available)("netperf's doc/examples command lines: the stock pair's output shape in both pairings", () => {
  for (const [script, line] of LINES) {
    test(`${script}: netperf ${line}`, async () => {
      const argv = (port: number) => ["-H", "127.0.0.1", "-p", String(port), ...line.split(" ")];
      // All three at once: sharing the cores bends the figures the shape hides, not the shape, and a file of 22
      // lines of 3 × 3 one-second iterations each stays near a minute.
      const [reference, ourServerRun, ourClientRun] = await Promise.all([
        finish(stockNetperf(argv(STOCK)), LIMIT_MS),
        finish(stockNetperf(argv(OURS)), LIMIT_MS),
        finish(oursNetperf(argv(STOCK)), LIMIT_MS),
      ]);
      const seen = (r: typeof reference) => ({ code: r.code, out: shape(r.out), err: shape(r.err) });
      expect({ "stock netperf -> anyperf netserver": seen(ourServerRun) }).toEqual({ "stock netperf -> anyperf netserver": seen(reference) });
      expect({ "anyperf netperf -> stock netserver": seen(ourClientRun) }).toEqual({ "anyperf netperf -> stock netserver": seen(reference) });
    }, 3 * LIMIT_MS);
  }
});
