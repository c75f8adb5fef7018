/**
 * A stock client's --isochronous on our server, TCP and UDP: the connection line notes "(isoch)" first, as the stock
 * servers print it ("(isoch) (reverse) (trip-times) (sock=5) ..."). Ours printed no note. With --trip-times a UDP
 * flow's lines add its frames, as a stock server's do; ours received them as a plain stream.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";
import { HEADER_UDP_ISOCH } from "../../compat/iperf2/text-report.ts";

for (const peer of iperf2Peers()) {
  describe(`stock ${peer.label} client --isochronous against anyperf iperf -s`, () => {
    for (const udp of [false, true]) {
      test.skipIf(peer.version === undefined)(`${udp ? "UDP" : "TCP"}: '(isoch)' on the connection line, the test ends on its -t`, async () => {
        const port = freePorts(28080, 28100, 1);
        const u = udp ? ["-u"] : [];
        const r = await session(oursMain(["-s", ...u, "-p", String(port)]), /Server listening/, () => stockPeer(peer)(["-c", "127.0.0.1", ...u, "-p", String(port), "-t", "1", "--isochronous"]), 20_000);
        expect(r.client.code, r.client.out).toBe(0);
        expect(r.server).toMatch(/connected with 127\.0\.0\.1 port \d+ \(isoch\)/);
        expect(r.server).toMatch(/\] 0\.0000-\d\.\d+ sec\s+[\d.]+ [KM]Bytes/);
      }, 60_000);
    }
  });
}

/** "2.39 MBytes" in MBytes. */
const mbytes = (text: string) => Number(/([\d.]+) MBytes/.exec(text)?.[1]);

for (const peer of iperf2Peers()) {
  test.skipIf(peer.version === undefined)(`stock ${peer.label} client -u --isochronous --trip-times: our server counts its frames, on the client's clock`, async () => {
    const port = freePorts(28080, 28100, 1);
    const r = await session(oursMain(["-s", "-u", "-e", "-i", "1", "-p", String(port)]), /Server listening/, () =>
      stockPeer(peer)(["-c", "127.0.0.1", "-u", "-e", "-i", "1", "-p", String(port), "-t", "2", "--isochronous", "--trip-times"]), 20_000);
    expect(r.client.code, r.client.out).toBe(0);
    expect(r.server).toContain(HEADER_UDP_ISOCH);
    const lines = r.server.split("\n").filter((l) => /^\[  1\] \d/.test(l));
    // Figures, then frames received/lost and the frame latency: "... 1741 pps   61/0  0.394/0.056/0.879/0.199 ms 1182136".
    const frames = lines.map((l) => /pps +(\d+)\/(\d+)  (-?[\d.]+)\/(-?[\d.]+)\/(-?[\d.]+)\/([\d.]+) ms \d+/.exec(l));
    expect(frames.every((m) => m !== null), r.server).toBe(true);
    const final = frames.at(-1)!;
    // The client's own count of frames sent ("isoch:tx/miss/slip" ... "121/0/0"), stock's first-frame quirk and all.
    const sent = Number(/\] 0\.0000-[2-9]\.\d+ sec .* (\d+)\/\d+\/\d+$/m.exec(r.client.out)?.[1]);
    expect(Math.abs(Number(final[1]) - sent), `${r.client.out}\n${r.server}`).toBeLessThanOrEqual(1);
    expect(final[2]).toBe("0");
    expect(Number(final[4])).toBeLessThanOrEqual(Number(final[3]));
    // Both ends' first second holds the same datagrams: our flow's clock starts at the client's own start.
    const first = (out: string) => mbytes(out.split("\n").find((l) => l.includes("] 0.0000-1.0000 sec"))!);
    expect(Math.abs(first(r.server) - first(r.client.out)), `${r.client.out}\n${r.server}`).toBeLessThanOrEqual(0.02);
  }, 60_000);
}
