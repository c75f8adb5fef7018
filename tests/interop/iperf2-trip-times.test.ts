/**
 * A stock client's --trip-times against our `iperf -s` (no -e), as 2.1.8 and 2.2.1 servers report it:
 *  - UDP (`-u -e --trip-times`): each datagram's one-way latency avg/min/max/stdev in the enhanced lines and in the
 *    report sent back (ours printed the plain jitter/loss line and sent "-/-/-/- ms 0 pps"; then cumulative figures
 *    in every interval);
 *  - TCP (`--trip-times`): the write-to-read latency of the client's stamped bursts, their count and size, inP and
 *    NetPwr (ours printed a plain line).
 * UDP latency counts from the kernel's arrival stamp (SIOCGSTAMPNS), not from when our loop read the datagram.
 * Each interval's figures are its own: its burst count is what arrived in it (the intervals' counts add up to no more
 * than the final line's), and the final line holds the intervals' extremes.
 */
import { expect, test } from "bun:test";
import { ours, oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";
import { iperf2Peers } from "../support/stock-peers.ts";

const MS4 = String.raw`(\d+\.\d{3})/(\d+\.\d{3})/(\d+\.\d{3})/(\d+\.\d{3}) ms`;
const UDP_LATENCY = new RegExp(`${MS4} \\d+ pps`);
// NetPwr is NAN for an interval no burst completed in (a loaded host can stall a stream that long), as stock prints it.
const TCP_LATENCY = new RegExp(`${MS4} \\((\\d+)/(\\d+)\\) +[\\d.]+ [KMG]?Byte (?:[\\d.]+|NAN)  \\d+$`);
const lineAt = (out: string, id: RegExp) => out.split("\n").filter((l) => id.test(l));

async function run(peer: (typeof PEERS)[number], udp: boolean, extra: string[] = []): Promise<{ server: string; client: string }> {
  const port = freePorts(27991, 27999, 1);
  const srv = oursMain(["-s", ...(udp ? ["-u"] : []), "-p", String(port), "-i", "0.5"]);
  try {
    await waitFor(srv, /Server listening/, 30_000);
    const args = ["-c", "127.0.0.1", ...(udp ? ["-u", "-e"] : []), "-p", String(port), "--trip-times", "-t", "1", "-i", "0.5", ...extra];
    const c = await stockPeer(peer)(args).done;
    expect(c.code, c.out).toBe(0);
    await Bun.sleep(300);
    return { server: srv.text(), client: c.out };
  } finally {
    srv.kill();
    await srv.done;
  }
}

const PEERS = iperf2Peers();

for (const peer of PEERS) {
  test.skipIf(peer.version === undefined)(`${peer.label} -u -e --trip-times: our server's lines and its report carry the latency`, async () => {
    const { server, client } = await run(peer, true);
    const lines = client.split("\n");
    const report = lines.slice(lines.findIndex((l) => l.endsWith("Server Report:"))).join("\n");
    expect(report, client).toMatch(UDP_LATENCY);
    expect(server).toContain("(trip-times)");
    const own = lineAt(server, /^\[ +1\] \d+\.\d+-\d+\.\d+ sec/);
    expect(own.length, server).toBeGreaterThanOrEqual(2);
    for (const l of own) expect(l, server).toMatch(UDP_LATENCY);
  }, 60_000);

  test.skipIf(peer.version === undefined)(`${peer.label} --trip-times (TCP): our server prints the bursts' write-to-read latency per interval`, async () => {
    const { server } = await run(peer, false);
    expect(server).toContain("(trip-times)");
    expect(server).toContain("Burst Latency avg/min/max/stdev (cnt/size) inP NetPwr");
    const own = lineAt(server, /^\[ +1\] \d+\.\d+-\d+\.\d+ sec/).map((l) => {
      const m = TCP_LATENCY.exec(l);
      expect(m, `${l}\n${server}`).not.toBeNull();
      const [avg, min, max] = [m![1], m![2], m![3]].map(Number) as [number, number, number];
      // Fewer than two bursts in an interval print 0 for min and max, as stock does.
      if (Number(m![5]) >= 2) {
        expect(min).toBeLessThanOrEqual(avg);
        expect(avg).toBeLessThanOrEqual(max);
      }
      return { start: Number(/\] (\d+\.\d+)-/.exec(l)![1]), count: Number(m![5]), size: Number(m![6]), min, max };
    });
    const final = own.find((l) => l.start === 0 && own.indexOf(l) === own.length - 1)!;
    const intervals = own.slice(0, -1);
    expect(intervals.length, server).toBeGreaterThanOrEqual(2);
    // The client writes 128 KiB bursts: every burst counted arrived whole.
    expect(final.size).toBe(131072);
    // Bursts of a tail after the last full interval are in the final line only.
    const counted = intervals.reduce((n, l) => n + l.count, 0);
    expect(counted, server).toBeGreaterThan(0);
    expect(counted, server).toBeLessThanOrEqual(final.count);
    for (const l of intervals.filter((x) => x.count > 1)) {
      expect(final.min, server).toBeLessThanOrEqual(l.min);
      expect(final.max, server).toBeGreaterThanOrEqual(l.max);
    }
  }, 60_000);
}

test.skipIf(PEERS[0]!.version === undefined)("-u -e -b 10m: arrivals are the kernel's stamps, so the least latency on loopback is a few µs, as stock's", async () => {
  const { server } = await run(PEERS[0]!, true, ["-b", "10m"]);
  // Stock times each datagram by SO_TIMESTAMP: 1-3 µs here. Timed when Bun's loop reached them, the least of about
  // 850 datagrams was 13 µs or more even on an idle host.
  const final = lineAt(server, /^\[ +1\] 0\.0+-\d+\.\d+ sec/).at(-1)!;
  expect(final, server).toMatch(UDP_LATENCY);
  expect(Number(UDP_LATENCY.exec(final)![2]), server).toBeLessThanOrEqual(0.008);
}, 60_000);

test.skipIf(PEERS[0]!.version === undefined)("a fresh server's first flow at 1 Mbit/s: no datagram stamped a datagram gap late", async () => {
  const { server } = await run(PEERS[0]!, true, ["-b", "1m"]);
  // The first datagram's first-time code took 20-30 ms; the datagrams that came meanwhile were read together and
  // each stamped with the last one's arrival: a max latency of one gap (11 ms at 1 Mbit/s) or two.
  const final = lineAt(server, /^\[ +1\] 0\.0+-\d+\.\d+ sec/).at(-1)!;
  expect(final, server).toMatch(UDP_LATENCY);
  expect(Number(UDP_LATENCY.exec(final)![3]), server).toBeLessThan(8);
}, 60_000);

test.skipIf(PEERS[0]!.version === undefined)("our client -u -R -e: stock's -e banner, (sock=N) and enhanced receive lines, each datagram's latency timed", async () => {
  const port = freePorts(27991, 27999, 1);
  const srv = stockPeer(PEERS[0]!)(["-s", "-u", "-p", String(port)]);
  try {
    await waitFor(srv, /Server listening/, 10_000);
    const c = await ours(["-c", "127.0.0.1", "-u", "-R", "-e", "-b", "10m", "-t", "1", "-p", String(port)]).done;
    expect(c.code, c.out).toBe(0);
    // Before, -e was dropped here: a plain banner and 'Jitter Lost/Total Datagrams' lines.
    expect(c.out).toMatch(/UDP port \d+ with pid \d+ \(1 flows\)/);
    expect(c.out).toContain("Latency avg/min/max/stdev PPS  Rx/inP  NetPwr");
    // The socket's descriptor, as stock's -e connection lines name theirs, forward too.
    expect(c.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(reverse\) \(sock=\d+\) on /);
    const fwd = await ours(["-c", "127.0.0.1", "-u", "-e", "-t", "0.5", "-p", String(port)]).done;
    expect(fwd.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(sock=\d+\) on /);
    const final = lineAt(c.out, /^\[ \*1\] 0\.0+-\d+\.\d+ sec/).at(-1)!;
    expect(final, c.out).toMatch(UDP_LATENCY);
    expect(Number(UDP_LATENCY.exec(final)![2]), c.out).toBeLessThanOrEqual(0.008);
  } finally {
    srv.kill();
    await srv.done;
  }
}, 60_000);
