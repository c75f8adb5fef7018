/**
 * Our `iperf -c --isochronous` against stock servers and our own. It was refused by name; now our client sends
 * frames as 2.1.8's does (docs/protocols/iperf2.md §2.7, §3.6).
 * - UDP: a stock 2.1.8 server, and ours, count the frames our client says it sent. A 2.2.1 server reads the frame
 *   fields 4 bytes further on (its own client's layout) and counts none, as it counts none of a stock 2.1.8
 *   client's: the test still runs and ends.
 * - TCP: each frame is a burst; with --trip-times a 2.2.1 server, and ours, count them. 2.1.8's server counts no
 *   isochronous burst, its own client's neither: the test still runs and ends.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { type Proc, oursMain, session, stockPeer } from "./iperf2-harness.ts";

interface Server {
  label: string;
  start(port: number): Proc;
  /** It reads 2.1.8's frame layout. */
  counts: boolean;
  runs: boolean;
}

const servers: Server[] = [
  ...iperf2Peers().map((p) => ({ label: p.label, start: (port: number) => stockPeer(p)(["-s", "-u", "-e", "-i", "1", "-p", String(port)]), counts: !p.version?.startsWith("2.2"), runs: p.version !== undefined })),
  { label: "anyperf iperf -s", start: (port: number) => oursMain(["-s", "-u", "-e", "-i", "1", "-p", String(port)]), counts: true, runs: true },
];

/** The final line's frame columns: the client's "isoch:tx/miss/slip", the server's "Frame:rx/lost". */
const clientFrames = (out: string) => /\] 0\.0000-[2-9]\.\d+ sec .* (\d+)\/(\d+)\/(\d+)(?: +\S+)?$/m.exec(out);
const serverFrames = (out: string) => /\] 0\.0000-[2-9]\.\d+ sec .* pps +(\d+)\/(\d+) +-?[\d.]+\/-?[\d.]+\/-?[\d.]+\/[\d.]+ ms \S+$/m.exec(out);

for (const s of servers) {
  describe(`anyperf iperf -c -u --isochronous against ${s.label}`, () => {
    for (const [label, extra] of [["60 frames/s of 20 Mbit/s", []], ["30 frames/s of 2 Mbit/s, 400 kbit/s deviation", ["--isochronous=30:2m,400k"]]] as const) {
      test.skipIf(!s.runs)(`${label}: the server counts the frames the client says it sent`, async () => {
        const port = freePorts(28140, 28160, 1);
        const isoch = extra.length ? [...extra] : ["--isochronous"];
        const r = await session(s.start(port), /Server listening/, () => oursMain(["-c", "127.0.0.1", "-u", "-p", String(port), "-t", "2", "-i", "1", "--trip-times", ...isoch]), 20_000);
        const both = `${r.client.out}\n--- server ---\n${r.server}`;
        expect(r.client.code, both).toBe(0);
        expect(r.client.out).toMatch(/^Isochronous: \d+\.00 frames\/sec mean=/m);
        expect(r.client.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(isoch\) \(trip-times\)/);
        expect(r.client.out).toContain("isoch:tx/miss/slip");
        const sent = clientFrames(r.client.out);
        expect(sent, both).not.toBeNull();
        // A 2 s test holds 2 s of whole frame periods, each sent or (a loaded host) missed; stock's count adds its
        // first frame once more.
        const perSecond = extra.length ? 30 : 60;
        expect(Number(sent![1]) + Number(sent![2]), both).toBe(2 * perSecond + 1);
        const got = serverFrames(r.server);
        expect(got, both).not.toBeNull();
        if (s.counts && sent![2] === "0") expect([Number(got![1]), got![2]], both).toEqual([Number(sent![1]), "0"]);
        else if (s.counts) expect(Number(got![1]), both).toBeLessThanOrEqual(Number(sent![1]));
        else expect([got![1], got![2]], both).toEqual(["0", "0"]);
      }, 60_000);
    }
  });
}

const tcpServers: Server[] = [
  ...iperf2Peers().map((p) => ({ label: p.label, start: (port: number) => stockPeer(p)(["-s", "-e", "-i", "1", "-p", String(port)]), counts: p.version?.startsWith("2.2") ?? false, runs: p.version !== undefined })),
  { label: "anyperf iperf -s", start: (port: number) => oursMain(["-s", "-e", "-i", "1", "-p", String(port)]), counts: true, runs: true },
];

/** The server's final burst count: "... 0.461/0.047/15.931/1.432 ms (121/41666) ...". */
const serverBursts = (out: string) => /\] 0\.0000-[2-9]\.\d+ sec .* ms \((\d+)\/(\d+)\)/.exec(out);

for (const s of tcpServers) {
  test.skipIf(!s.runs)(`anyperf iperf -c --isochronous --trip-times (TCP) against ${s.label}: each frame a burst at its slot`, async () => {
    const port = freePorts(28140, 28160, 1);
    const r = await session(s.start(port), /Server listening/, () => oursMain(["-c", "127.0.0.1", "-p", String(port), "-t", "2", "-i", "1", "--trip-times", "--isochronous"]), 20_000);
    const both = `${r.client.out}\n--- server ---\n${r.server}`;
    expect(r.client.code, both).toBe(0);
    expect(r.client.out).toContain("Isochronous: 60.00 frames/sec mean=20.0 Mbit/s");
    expect(r.client.out).toContain("isoch:tx/miss/slip");
    // Stock's TCP client checks the clock before it waits for a slot: the frame due at 1.99992 s goes (121 frames,
    // "122" with the first counted twice) unless the stop comes first.
    const sent = clientFrames(r.client.out);
    expect(sent, both).not.toBeNull();
    expect([121, 122]).toContain(Number(sent![1]) + Number(sent![2]));
    const got = serverBursts(r.server);
    if (s.counts) expect([Number(got?.[1]), got?.[2]], both).toEqual([Number(sent![1]) - 1, "41666"]);
    else expect(r.server).toContain("(isoch) (trip-times)");
  }, 60_000);
}
