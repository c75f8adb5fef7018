/**
 * Issue 25: a stock iperf 2 client (2.1.8, trixie's 2.2.1) never hangs against anyperf, whatever option it passes.
 * Each option of its list (never-hang-iperf2-options.ts) runs for 1 s, 2.1.8's against `anyperf iperf -s` (`-s -u`
 * for the UDP ones) and 2.2.1's against `anyperf serve`, bounded at 20 s; every run ends, a refusal ends the client with a line saying
 * why, and the server then passes a plain test. Ports 36800-36999.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc } from "../support/processes.ts";
import { iperf2Peers } from "../support/stock-peers.ts";
import { anyperf } from "../serve/harness.ts";
import { iperf2Cases } from "./never-hang-iperf2-options.ts";
import { readmeDisagreements, readmeTable, report, runTable, type OptionCase, type Outcome, type Table } from "./never-hang.ts";

const HEADING = "#### iperf 2 clients";

const dir = mkdtempSync(join(tmpdir(), "never-hang-iperf2-"));
writeFileSync(join(dir, "send"), new Uint8Array(1 << 20));
const file = (name: string) => join(dir, name);
let next = 36800;
const port = (n = 1) => {
  const p = freePorts(next, 37000, n);
  next = p + n;
  return p;
};
const isUdp = (c: OptionCase) => c.args.includes("-u");
/** -n ends the test instead of -t. */
const ends = (c: OptionCase) => (c.args.includes("-n") ? [] : ["-t", "1"]);

/** Our servers: the dialect's own (UDP cases need `-u`, as stock's), and serve, which answers both on one port. */
const servers: Record<string, (udp: boolean) => { server: (p: number) => ReturnType<typeof spawnProc>; portsPerLane: number }> = {
  "anyperf iperf -s": (udp) => ({ server: (p) => spawnProc([...anyperf(), "iperf", "-s", "-p", String(p), ...(udp ? ["-u"] : [])], 600_000), portsPerLane: 1 }),
  "anyperf serve": () => ({
    server: (p) => spawnProc([...anyperf(), "serve", "-p", String(p + 1), "--iperf", String(p), "--iperf3", "off", "--netserver", "off", "--ntttcp", "off"], 600_000),
    portsPerLane: 2,
  }),
};

// The system's client against the dialect's server, the newer one against serve: both servers, in half the time;
// a newest build (ANYPERF_IPERF*_NEWEST) against the dialect's server again.
for (const [peer, [name, make]] of iperf2Peers().map((p, i) => [p, Object.entries(servers)[i % 2]!] as const)) {
  describe.skipIf(!peer.version)(`stock ${peer.label} client, every option -> ${name}`, () => {
    test("every run ends (applied or refused with a line saying why) and the server serves the next test", async () => {
      const cases = iperf2Cases(file, peer.version !== "2.1.8");
      const outcomes: Outcome[] = [];
      const problems: string[] = [];
      for (const udp of [false, true]) {
        const s = make(udp);
        const proto = udp ? ["-u"] : [];
        const table: Table = {
          server: s.server,
          client: (p, c) => [peer.command, "-c", c.host ?? "127.0.0.1", "-p", String(p), ...ends(c), ...c.args],
          plain: (p) => [peer.command, "-c", "127.0.0.1", "-p", String(p), "-t", "1", ...proto],
          cases: cases.filter((c) => isUdp(c) === udp),
          lanes: 3,
          ports: (n) => Array.from({ length: n }, () => port(s.portsPerLane)),
          // Stock's `iperf -s -u` (and ours) binds UDP only.
          readyProto: udp && name === "anyperf iperf -s" ? "udp" : "tcp",
          boundMs: 20_000,
        };
        const r = await runTable(table);
        outcomes.push(...r.outcomes);
        problems.push(...r.serverProblems, ...(await readmeDisagreements(table, r.outcomes, HEADING)));
      }
      console.log(`${peer.label} -> ${name}\n${report(outcomes)}`);
      expect({ hung: outcomes.filter((o) => o.hung).map((o) => o.option), problems }).toEqual({ hung: [], problems: [] });
      expect(outcomes.filter((o) => o.code !== 0 && o.last === "").map((o) => o.option)).toEqual([]);
      expect(outcomes.length).toBe(cases.length);
      // README's table (checked against each run above) has no row for an option no run tried.
      expect([...readmeTable(HEADING).keys()].filter((o) => !cases.some((c) => c.option === o) && peer.version !== "2.1.8")).toEqual([]);
    }, 600_000);
  });
}
