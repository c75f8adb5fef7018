import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { assertFree, freePorts, hasTool, spawnProc, waitBound, type Proc } from "../support/processes.ts";

/**
 * UDP over ::1 in every mode (issue 21 item 7): a UDP socket that is only told its IPv6 peer must be an IPv6
 * socket. Stock iperf3, iperf 2 and netserver where installed (skipped otherwise); ntttcp-for-linux has no UDP over
 * IPv6 ("not implemented yet"), so ntttcp runs ours against ours. Ports 34100-34149, free ones picked at run time (the range is also the
 * kernel's ephemeral one).
 */

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const ours = (args: string[], limitMs = 30_000): Proc => spawnProc([process.execPath, MAIN, ...args], limitMs);
const hasIPv6 = hasTool(["cat", "/proc/net/if_inet6"], /^0{31}1 /m);
const iperf3 = hasTool(["iperf3", "-v"], /iperf 3\./);
const iperf2 = hasTool(["iperf", "-v"], /iperf version 2\./);
const netperf = hasTool(["netperf", "-V"], /Netperf version 2\.7\.0/);

async function stopped(server: Proc): Promise<void> {
  server.kill();
  await server.done;
}

describe.skipIf(!hasIPv6)("UDP over ::1", () => {
  test.skipIf(!iperf3)("anyperf iperf3 -c ::1 -u against stock iperf3 -s", async () => {
    const port = freePorts(34100, 34110, 1);
    assertFree(port);
    const server = spawnProc(["iperf3", "-s", "-1", "-B", "::1", "-p", String(port)]);
    try {
      await waitBound(port);
      const r = await ours(["iperf3", "-c", "::1", "-p", String(port), "-u", "-b", "10M", "-l", "1400", "-t", "1", "-J"]).done;
      expect(r.stderr).toBe("");
      const doc = JSON.parse(r.stdout) as { end: { sum: { packets: number; lost_packets: number } }; start: { connected: { remote_host: string }[] } };
      expect(r.code).toBe(0);
      expect(doc.start.connected[0]!.remote_host).toBe("::1");
      expect(doc.end.sum.packets).toBeGreaterThan(500);
    } finally {
      await stopped(server);
    }
  });

  test.skipIf(!netperf)("anyperf netperf -H ::1 -6 UDP_RR and UDP_STREAM against stock netserver -6", async () => {
    const port = freePorts(34110, 34120, 1);
    assertFree(port);
    const server = spawnProc(["netserver", "-D", "-6", "-L", "::1", "-p", String(port)]);
    try {
      await waitBound(port);
      for (const t of ["UDP_RR", "UDP_STREAM"]) {
        const r = await ours(["netperf", "-H", "::1", "-6", "-p", String(port), "-t", t, "-l", "1", "--", "-k", "THROUGHPUT,TRANSACTION_RATE,REMOTE_RECV_CALLS"]).done;
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        expect(Number(/REMOTE_RECV_CALLS=(\d+)/.exec(r.stdout)?.[1])).toBeGreaterThan(100);
      }
    } finally {
      await stopped(server);
    }
  });

  test.skipIf(!netperf)("stock netperf -6 UDP_RR against anyperf netserver -6", async () => {
    const port = freePorts(34120, 34130, 1);
    assertFree(port);
    const server = ours(["netserver", "-D", "-6", "-L", "::1", "-p", String(port)]);
    try {
      await waitBound(port);
      const r = await spawnProc(["netperf", "-H", "::1", "-6", "-p", String(port), "-t", "UDP_RR", "-l", "1", "--", "-k", "TRANSACTION_RATE"]).done;
      expect(r.code).toBe(0);
      expect(Number(/TRANSACTION_RATE=([\d.]+)/.exec(r.stdout)?.[1])).toBeGreaterThan(100);
    } finally {
      await stopped(server);
    }
  });

  test.skipIf(!iperf2)("anyperf iperf -c ::1 -u -V against stock iperf -s -u -V", async () => {
    const port = freePorts(34130, 34140, 1);
    assertFree(port, "udp");
    const server = spawnProc(["iperf", "-s", "-u", "-V", "-B", "::1", "-p", String(port)]);
    try {
      await waitBound(port, "udp");
      const r = await ours(["iperf", "-c", "::1", "-u", "-V", "-p", String(port), "-t", "1"]).done;
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Server Report:/);
      expect(r.stdout).toMatch(new RegExp(`connected with ::1 port ${port}\\b`));
    } finally {
      await stopped(server);
    }
  });

  test("anyperf ntttcp -6 -u sender to anyperf ntttcp -6 -u receiver", async () => {
    const port = freePorts(34140, 34150, 2) + 1;
    assertFree(port, "udp");
    const receiver = ours(["ntttcp", "-r::1", "-6", "-u", "-p", String(port), "-P", "1", "-t", "1"], 20_000);
    await waitBound(port, "udp");
    const sender = await ours(["ntttcp", "-s::1", "-6", "-u", "-p", String(port), "-P", "1", "-n", "1", "-t", "1"], 20_000).done;
    const rx = await receiver.done;
    expect(sender.code).toBe(0);
    expect(rx.code).toBe(0);
    const bytes = Number(/total bytes\s*:(\d+)/.exec(rx.stdout)?.[1]);
    expect(bytes).toBeGreaterThan(1e6);
  });

  test("anyperf loopback -6 (UDP and TCP)", async () => {
    for (const extra of [["-u", "-b", "20M"], []]) {
      const r = await ours(["loopback", "-6", "-t", "1", "-P", "1", "--json", ...extra]).done;
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout) as { summary: { bytes: number }; errors: unknown[] };
      expect(doc.errors).toEqual([]);
      expect(doc.summary.bytes).toBeGreaterThan(1e5);
    }
  });
});
