/**
 * Stock clients' `-u -R` with --isochronous and --trip-times against our `iperf -s -u`:
 * - --isochronous: our server sends the frames the header's settings ask for (60 frames/s of 20 Mbit/s), as stock
 *   servers do; ours sent a plain 1 Mbit/s stream, a different test with no word said;
 * - --trip-times: our datagrams carry our start at offset 112, as a stock server's do; a 2.1.8 client that found none
 *   dropped --trip-times, then never ended (and ignores SIGTERM);
 * - both: the client counts our frames (121 in 2 s, its first twice) in the frame layout of its own version.
 */
import { describe, expect, test } from "bun:test";
import { type StockPeer, iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";

const final = (out: string) => /\[ \*1\] 0\.0000-[12]\.\d+ sec +([\d.]+) MBytes .*$/m.exec(out);

for (const peer of iperf2Peers()) {
  describe(`stock ${peer.label} client -u -R against anyperf iperf -s -u -e`, () => {
    test.skipIf(peer.version === undefined)("--trip-times -e: the test ends on its -t with its figures", async () => {
      const port = freePorts(28230, 28250, 1);
      const r = await session(oursMain(["-s", "-u", "-p", String(port)]), /Server listening/, () => stockPeer(peer)(["-c", "127.0.0.1", "-u", "-R", "-e", "--trip-times", "-p", String(port), "-t", "2"]), 15_000);
      expect(r.client.code, r.client.out).toBe(0);
      expect(r.client.out).not.toContain("WARN: ignore --trip-times");
      expect(r.client.out).toMatch(/\[ \*1\] 0\.0000-[12]\.\d+ sec +2\d\d KBytes/);
    }, 60_000);

    for (const tripTimes of [false, true]) {
      test.skipIf(peer.version === undefined)(`--isochronous${tripTimes ? " --trip-times" : ""}: our server sends its frames, 20 Mbit/s`, async () => {
        const port = freePorts(28230, 28250, 1);
        const tt = tripTimes ? ["--trip-times"] : [];
        const r = await session(oursMain(["-s", "-u", "-e", "-p", String(port)]), /Server listening/, () =>
          stockPeer(peer)(["-c", "127.0.0.1", "-u", "-R", "-e", "--isochronous", ...tt, "-p", String(port), "-t", "2"]), 15_000);
        const both = `${r.client.out}\n--- server ---\n${r.server}`;
        expect(r.client.code, both).toBe(0);
        const f = final(r.client.out);
        expect(f, both).not.toBeNull();
        // 120 frames of 41666 bytes: 4.77 MBytes (a plain stream at the default 1 Mbit/s was 0.25).
        expect(Number(f![1])).toBeGreaterThan(4.6);
        expect(Number(f![1])).toBeLessThan(4.9);
        expect(r.server).toContain("isoch:tx/miss/slip");
        // Every slot of the 2 s is a frame sent or, on a loaded host, missed (a late frame skips its slots).
        const tx = /\] 0\.0000-[12]\.\d+ sec .* pps +(\d+)\/(\d+)\/(\d+)$/m.exec(r.server);
        expect(tx, both).not.toBeNull();
        expect(Number(tx![1]) + Number(tx![2]), both).toBe(121);
        // The client counts our frames where its own version puts their fields.
        if (tripTimes) {
          const rx = /\[ \*1\] 0\.0000-[12]\.\d+ sec .* pps +(\d+)\/(\d+) /.exec(r.client.out);
          expect(rx, both).not.toBeNull();
          expect(Math.abs(Number(rx![1]) - Number(tx![1])), both).toBeLessThanOrEqual(1);
        }
      }, 60_000);
    }
  });
}

/**
 * The same over TCP (-R): with --trip-times our server sends its header first and then bursts with the 92-byte burst
 * header, as stock servers do (a 2.2.1 client took our plain digits for one 1.5 GB burst); with --isochronous the
 * frames the header's settings ask for (ours sent a bulk stream at full speed).
 */
const tcpFinal = (out: string) => /\[ \*1\] 0\.0000-[12]\.\d+ sec +([\d.]+) ([MG])Bytes .*$/m.exec(out);

/** A 2 s `-R -e` test of the stock client with `extra` against our `iperf -s -e`; the client must end with 0. */
async function reverseTcp(peer: StockPeer, extra: string[]): Promise<{ server: string; client: string; both: string }> {
  const port = freePorts(28230, 28250, 1);
  const r = await session(oursMain(["-s", "-e", "-p", String(port)]), /Server listening/, () => stockPeer(peer)(["-c", "127.0.0.1", "-R", "-e", ...extra, "-p", String(port), "-t", "2"]), 15_000);
  const both = `${r.client.out}\n--- server ---\n${r.server}`;
  expect(r.client.code, both).toBe(0);
  return { server: r.server, client: r.client.out, both };
}

/** The client's final burst count and size: "... ms (121/41666) ...". */
function clientBursts(r: { client: string; both: string }): [number, string] {
  const m = /\[ \*1\] 0\.0000-[12]\.\d+ sec .* ms \((\d+)\/(\d+)\)/.exec(r.client);
  expect(m, r.both).not.toBeNull();
  return [Number(m![1]), m![2]!];
}

for (const peer of iperf2Peers()) {
  describe(`stock ${peer.label} client -R (TCP) against anyperf iperf -s -e`, () => {
    test.skipIf(peer.version === undefined)("--trip-times: bursts the client times, each of its -l", async () => {
      const [count, size] = clientBursts(await reverseTcp(peer, ["--trip-times"]));
      expect(count).toBeGreaterThan(100);
      expect(size).toBe("131072");
    }, 60_000);

    test.skipIf(peer.version === undefined)("--isochronous: the frames, 20 Mbit/s", async () => {
      const r = await reverseTcp(peer, ["--isochronous"]);
      const f = tcpFinal(r.client);
      expect(f, r.both).not.toBeNull();
      expect([f![2], Number(f![1]) > 4.6 && Number(f![1]) < 4.9], r.both).toEqual(["M", true]);
      expect(r.server).toContain("isoch:tx/miss/slip");
    }, 60_000);

    // 2.1.8's client counts no isochronous burst, whoever sends them (its own server's included).
    test.skipIf(peer.version === undefined || !peer.version.startsWith("2.2"))("--isochronous --trip-times: the client times each frame", async () => {
      const [count, size] = clientBursts(await reverseTcp(peer, ["--isochronous", "--trip-times"]));
      expect(count).toBeGreaterThanOrEqual(115);
      expect(size).toBe("41666");
    }, 60_000);
  });
}
