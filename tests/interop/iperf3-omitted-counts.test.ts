/**
 * The results frame of our server carries `omitted_errors` and `omitted_packets` (the omit period's share of each
 * total) where 3.14+ servers put them: after `errors` and after `packets`, for every protocol (TCP: 0 and 0). Seen
 * on the wire through the 3.18 client's -d print of the frame it got ("get_results"), against the stock 3.18
 * server's frame for the same test. Ports 36800-36849.
 */
import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { hasTrixieIperf3, ours, trixie, waitListening, type Proc } from "./iperf3-harness.ts";

const T = 90_000;
// freePorts never hands out a port twice in one process.
const port = () => freePorts(36800, 36850, 1);

type Frame = { streams: Array<Record<string, number>> };

/** The document a -d client printed under `label` ("send_results": its own; "get_results": the server's). */
function printed(out: string, label: string): Frame {
  const lines = out.split("\n");
  const at = lines.indexOf(label);
  const end = lines.indexOf("}", at);
  if (at < 0 || end < 0) throw new Error(`no ${label} in:\n${out}`);
  return JSON.parse(lines.slice(at + 1, end + 1).join("\n"));
}

async function frames(server: (a: string[]) => Proc, args: string[]): Promise<{ client: Frame; server: Frame }> {
  const p = port();
  const srv = server(["-s", "-p", String(p), "-1"]);
  try {
    await waitListening(p);
    const f = await trixie(["-c", "127.0.0.1", "-p", String(p), "-d", ...args]).done;
    expect(f.code).toBe(0);
    return { client: printed(f.stdout, "send_results"), server: printed(f.stdout, "get_results") };
  } finally {
    srv.kill();
    await srv.done;
  }
}

describe.skipIf(!hasTrixieIperf3())("iperf3 results frame: omitted_errors and omitted_packets, as the 3.18 server sends them", () => {
  test("UDP -O 1, both directions: the keys in the stock order, and the omit period's packets on both ends agree", async () => {
    for (const dir of [[], ["-R"]]) {
      const args = ["-u", "-b", "10M", "-t", "2", "-O", "1", ...dir];
      const stockFrame = (await frames(trixie, args)).server.streams[0]!;
      const { client, server } = await frames(ours, args);
      const s = server.streams[0]!;
      const c = client.streams[0]!;
      expect(Object.keys(s)).toEqual(Object.keys(stockFrame));
      expect(Object.keys(s).slice(4, 8)).toEqual(["errors", "omitted_errors", "packets", "omitted_packets"]);
      // About a third of 2 s + 1 s omitted at 10 Mbit/s; the receiver's count (its highest sequence number at the
      // omit end) and the sender's (datagrams written by then) are cut on two clocks, a few datagrams apart.
      expect(s.omitted_packets).toBeGreaterThan(0.2 * s.packets!);
      expect(s.omitted_packets).toBeLessThan(0.5 * s.packets!);
      expect(Math.abs(s.omitted_packets! - c.omitted_packets!)).toBeLessThanOrEqual(4);
      expect(s.omitted_errors).toBeLessThanOrEqual(s.errors!);
    }
  }, T);

  test("TCP: 0 and 0, as 3.18 sends them", async () => {
    const { server } = await frames(ours, ["-t", "1"]);
    expect(server.streams[0]).toMatchObject({ omitted_errors: 0, omitted_packets: 0 });
  }, T);
});
