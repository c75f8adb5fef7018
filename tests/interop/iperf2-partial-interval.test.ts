/**
 * With -i, iperf 2 prints a stream's last interval when its end cuts it short by more than a quarter of -i
 * (PARTIALPERCENT), before the stream's final line, and the sum's likewise: `-t 1.5 -i 1` ends with
 * "1.0000-1.50 sec" lines, `-t 1.1 -i 1` with none. Ours printed no partial interval, in either role.
 */
import { describe, expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { oursMain, session, stockPeer } from "./iperf2-harness.ts";

const PEERS = iperf2Peers();

/** "[  1] 1.0000-1.5070 sec ..." → { id, start, end }, for every report line. */
function spans(out: string): { id: string; start: number; end: number }[] {
  return [...out.matchAll(/^\[\s*(\w+)\]\s+([\d.]+)-\s*([\d.]+) sec/gm)].map((m) => ({ id: m[1]!, start: Number(m[2]), end: Number(m[3]) }));
}

/** Each stream's and the sum's partial line (1.0 to its end) comes right before its final line (0.0 to the same end). */
function expectPartials(out: string, ids: string[]): void {
  const s = spans(out);
  for (const id of ids) {
    const mine = s.filter((x) => x.id === id);
    const final = mine.at(-1)!;
    const partial = mine.at(-2)!;
    expect(final.start, out).toBe(0);
    expect(final.end).toBeGreaterThan(1.25);
    expect(partial.start, out).toBe(1);
    expect(Math.abs(partial.end - final.end), out).toBeLessThan(0.0015);
  }
}

function expectNoPartial(out: string): void {
  expect(spans(out).filter((x) => x.start === 1), out).toEqual([]);
}

const ARGS = (port: number, t: string) => ["-c", "127.0.0.1", "-p", String(port), "-t", t, "-i", "1", "-b", "10m", "-l", "1000"];

const servers = [
  ...PEERS.map((p) => ({ label: p.label, runs: p.version !== undefined, start: (port: number) => stockPeer(p)(["-s", "-p", String(port)]) })),
  { label: "anyperf iperf -s", runs: true, start: (port: number) => oursMain(["-s", "-p", String(port)]) },
];

for (const srv of servers) {
  describe(`anyperf iperf -c -i 1 against ${srv.label}`, () => {
    test.skipIf(!srv.runs)("-t 1.5 -P 2: each stream's 1.0-1.5 line, then the sum's; -t 1.1: none", async () => {
      const port = freePorts(27960, 27980, 1);
      const a = await session(srv.start(port), /Server listening/, () => oursMain([...ARGS(port, "1.5"), "-P", "2"]), 20_000);
      expect(a.client.code, a.client.out).toBe(0);
      expectPartials(a.client.out, ["1", "2", "SUM"]);
      const b = await session(srv.start(port), /Server listening/, () => oursMain(ARGS(port, "1.1")), 20_000);
      expect(b.client.code, b.client.out).toBe(0);
      expectNoPartial(b.client.out);
    }, 60_000);
  });
}

for (const peer of PEERS) {
  describe(`stock ${peer.label} client -i 1 against anyperf iperf -s -i 1`, () => {
    test.skipIf(peer.version === undefined)("-t 1.5 -P 2: the server prints each stream's 1.0-1.5 line and the sum's; -t 1.1: none", async () => {
      const port = freePorts(27980, 28000, 1);
      const a = await session(oursMain(["-s", "-p", String(port), "-i", "1"]), /Server listening/, () => stockPeer(peer)([...ARGS(port, "1.5"), "-P", "2"]), 20_000);
      expect(a.client.code, a.client.out).toBe(0);
      expectPartials(a.server, ["1", "2", "SUM"]);
      const b = await session(oursMain(["-s", "-p", String(port), "-i", "1"]), /Server listening/, () => stockPeer(peer)(ARGS(port, "1.1")), 20_000);
      expectNoPartial(b.server);
    }, 60_000);
  });
}
