/**
 * Issue 25: a stock iperf3 client (3.12, trixie's 3.18) never hangs against anyperf, whatever option it passes.
 * Each option of its list (never-hang-iperf3-options.ts) runs for 1 s, 3.12's against `anyperf iperf3 -s` and
 * 3.18's against `anyperf serve`, bounded at 20 s; every run ends, a refusal ends the client with one line saying why, and the
 * server then passes a plain test. Ports 36600-36799.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc } from "../support/processes.ts";
import { iperf3Peers } from "../support/stock-peers.ts";
import { anyperf } from "../serve/harness.ts";
import { iperf3Cases } from "./never-hang-iperf3-options.ts";
import { readmeDisagreements, readmeTable, report, runTable, type OptionCase, type Table } from "./never-hang.ts";

const HEADING = "#### iperf3 clients";

const dir = mkdtempSync(join(tmpdir(), "never-hang-iperf3-"));
writeFileSync(join(dir, "send"), new Uint8Array(1 << 20));
const file = (name: string) => join(dir, name);
/** -n and -k end the test instead of -t (3.12 refuses two end conditions). */
const ends = (c: OptionCase) => (c.args.includes("-n") || c.args.includes("-k") ? [] : ["-t", "1"]);
let next = 36600;
const port = (n = 1) => {
  const p = freePorts(next, 36800, n);
  next = p + n;
  return p;
};

const servers = {
  "anyperf iperf3 -s": { server: (p: number) => spawnProc([...anyperf(), "iperf3", "-s", "-p", String(p)], 600_000), portsPerLane: 1, readyOffset: 0 },
  "anyperf serve": {
    // serve's own port beside its iperf3 one; nothing else listens.
    server: (p: number) => spawnProc([...anyperf(), "serve", "-p", String(p + 1), "--iperf3", String(p), "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 600_000),
    portsPerLane: 2,
    readyOffset: 0,
  },
} as const;

// The system's client against the dialect's server, the newer one against serve: both servers, in half the time;
// a newest build (ANYPERF_IPERF*_NEWEST) against the dialect's server again.
for (const [peer, [name, s]] of iperf3Peers().map((p, i) => [p, Object.entries(servers)[i % 2]!] as const)) {
  describe.skipIf(!peer.version)(`stock ${peer.label} client, every option -> ${name}`, () => {
    test("every run ends (applied or refused in one line) and the server serves the next test", async () => {
      const cases = iperf3Cases(file, () => port(), peer.version !== "3.12");
      const client = (p: number, c: OptionCase) => [peer.command, "-c", c.host ?? "127.0.0.1", "-p", String(p), ...ends(c), ...c.args];
      const table: Table = {
        server: s.server,
        client,
        plain: (p) => [peer.command, "-c", "127.0.0.1", "-p", String(p), "-t", "1"],
        cases,
        lanes: 3,
        ports: (n) => Array.from({ length: n }, () => port(s.portsPerLane)),
        readyOffset: s.readyOffset,
        boundMs: 20_000,
      };
      const r = await runTable(table);
      console.log(`${peer.label} -> ${name}\n${report(r.outcomes)}`);
      expect({ hung: r.outcomes.filter((o) => o.hung).map((o) => o.option), server: r.serverProblems }).toEqual({ hung: [], server: [] });
      // README's table has a row for every option run and says refused exactly where a run was, and no more rows.
      expect(await readmeDisagreements(table, r.outcomes, HEADING)).toEqual([]);
      expect([...readmeTable(HEADING).keys()].filter((o) => !cases.some((c) => c.option === o) && !(peer.version === "3.12" && o === "--json-stream"))).toEqual([]);
      // A refusal says why in a line of iperf3's own ("iperf3: error - ..."); a build without SCTP (one made from
      // source without libsctp) refuses --sctp, --nstreams and -X itself, with its usage line, before it connects.
      const ownUsage = (o: { option: string; last: string }) => !peer.system && /^Try `iperf3 --help'/.test(o.last) && ["--sctp", "--nstreams", "-X"].includes(o.option);
      expect(r.outcomes.filter((o) => o.code !== 0 && !/^iperf3: error - \S/.test(o.last) && !ownUsage(o)).map((o) => `${o.option}: ${o.last}`)).toEqual([]);
      expect(r.outcomes.length).toBe(cases.length);
    }, 600_000);
  });
}
