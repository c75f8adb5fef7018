/**
 * Issue 25: netperf 2.7.0 never hangs against anyperf, nor ours against a stock netserver, whatever option is passed.
 * Each option of netperf's lists (never-hang-netperf-options.ts) runs for 1 s: stock netperf against
 * `anyperf netserver` and against `anyperf serve`, and `anyperf netperf` against stock netserver, each run bounded
 * (20 s, 40 s for our client run from source); every run ends, a refusal ends the client with a line saying why, and the server then passes a plain
 * test. README's tables say which options run and which are refused. Ports 37100-37299.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc } from "../support/processes.ts";
import { anyperf } from "../serve/harness.ts";
import { hasStockNetperf } from "./netperf-harness.ts";
import { netperfCases } from "./never-hang-netperf-options.ts";
import { readmeDisagreements, readmeTable, report, runTable, type OptionCase, type Table } from "./never-hang.ts";

const available = hasStockNetperf();
const dir = mkdtempSync(join(tmpdir(), "never-hang-netperf-"));
writeFileSync(join(dir, "fill"), new Uint8Array(1 << 16).fill(0x61));
const cases = netperfCases((name) => join(dir, name));
let next = 37100;
const port = (n: number) => {
  const p = freePorts(next, 37300, n);
  next = p + n;
  return p;
};

const client = (cmd: string[]) => (p: number, c: OptionCase) => [...cmd, "-H", c.host ?? "127.0.0.1", "-p", String(p), "-l", "1", ...c.args.map((a) => a.replaceAll("PORT", String(p)))];
const plain = (cmd: string[]) => (p: number) => [...cmd, "-H", "127.0.0.1", "-p", String(p), "-l", "1", "-P", "0"];

const pairings: { name: string; heading: string; table: Omit<Table, "cases" | "ports" | "lanes" | "boundMs"> }[] = [
  {
    name: "stock netperf -> anyperf netserver",
    heading: "#### netperf 2.7.0 clients",
    table: { server: (p) => spawnProc([...anyperf(), "netserver", "-D", "-p", String(p)], 600_000), client: client(["netperf"]), plain: plain(["netperf"]) },
  },
  {
    name: "stock netperf -> anyperf serve",
    heading: "#### netperf 2.7.0 clients",
    table: {
      // serve's own port beside its netserver one; nothing else listens.
      server: (p) => spawnProc([...anyperf(), "serve", "-p", String(p + 1), "--netserver", String(p), "--iperf3", "off", "--iperf", "off", "--ntttcp", "off"], 600_000),
      portsPerLane: 2,
      client: client(["netperf"]),
      plain: plain(["netperf"]),
    },
  },
  {
    name: "anyperf netperf -> stock netserver",
    heading: "#### anyperf netperf against a stock netserver",
    table: { server: (p) => spawnProc(["netserver", "-D", "-p", String(p)], 600_000), client: client([...anyperf(), "netperf"]), plain: plain([...anyperf(), "netperf"]) },
  },
];

for (const { name, heading, table: t } of pairings) {
  describe.skipIf(!available)(`${name}, every option`, () => {
    test("every run ends (applied or refused with a line saying why) and the server serves the next test", async () => {
      // Our client from source starts in seconds on a loaded host (10-14 s per 1 s run were seen): its bound is wider.
      const boundMs = name.startsWith("anyperf netperf") ? 40_000 : 20_000;
      const table: Table = { ...t, cases, lanes: 3, ports: (n) => Array.from({ length: n }, () => port(t.portsPerLane ?? 1)), boundMs };
      const r = await runTable(table);
      const problems = [...r.serverProblems, ...(await readmeDisagreements(table, r.outcomes, heading))];
      console.log(`${name}\n${report(r.outcomes)}`);
      expect({ hung: r.outcomes.filter((o) => o.hung).map((o) => o.option), problems }).toEqual({ hung: [], problems: [] });
      expect(r.outcomes.filter((o) => o.code !== 0 && o.last === "").map((o) => o.option)).toEqual([]);
      expect(r.outcomes.length).toBe(cases.length);
      // README's table (checked against each run above) has no row for an option no run tried.
      expect([...readmeTable(heading).keys()].filter((o) => !cases.some((c) => c.option === o))).toEqual([]);
    }, 600_000);
  });
}
