/**
 * A stock client's --isochronous on our server, TCP and UDP: the connection line notes "(isoch)" first, as the stock
 * servers print it ("(isoch) (reverse) (trip-times) (sock=5) ..."), and the frames are received as a stream (no
 * frame accounting: README's iperf 2 server table). Ours printed no note.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";

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
