/**
 * Issue 25: a stock ntttcp-for-linux sender (1.4.3 at its newest commit; NTTTCP_LINUX) never hangs against anyperf,
 * whatever option it passes. Each option of its list (never-hang-ntttcp-options.ts) runs a 1 s test against
 * `anyperf ntttcp -r -H` (`-u` or `-6` for those cases, as a stock receiver needs) and against `anyperf serve`,
 * bounded at 20 s; every run ends, a refusal ends the sender with a line saying why, and the receiver then passes a
 * plain test. Ports 37000-37999.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, sleep, spawnProc, waitBound } from "../support/processes.ts";
import { anyperf, ntttcpLinux, TOKEN_OFFSET } from "../serve/harness.ts";
import { ntttcpCases } from "./never-hang-ntttcp-options.ts";
import { readmeDisagreements, readmeTable, report, runTable, type OptionCase, type Outcome, type Table } from "./never-hang.ts";

const HEADING = "#### ntttcp-for-linux senders";
const REAL = ntttcpLinux();

const dir = mkdtempSync(join(tmpdir(), "never-hang-ntttcp-"));
const file = (name: string) => join(dir, name);
/** A lane: the sync port, then serve's 16 data ports and its own port; serve's token ports at + TOKEN_OFFSET. */
const LANE = 18;
let next = 37000;
const lanePort = () => {
  const p = freePorts(next, 38000, LANE, [TOKEN_OFFSET]);
  next = p + LANE;
  return p;
};
// -f's source ports below the kernel's ephemeral range (from 32768), where another lane's client socket could hold
// one: 1.4.3 logs the failed bind and then waits forever.
const cport = () => freePorts(25000, 26000, 4);

/**
 * Between two tests our -H receiver closes its data ports for a moment (its Workers' listeners are the test's), and
 * a -N sender's first bytes start a test, during which a sync sender is told the receiver is busy; 1.4.3's -H
 * receiver does neither (README: "ntttcp-for-linux senders"). A stock sender refused a data connection waits
 * forever, so each run starts once the last test is over and the data ports listen again.
 */
const settle = (proto: "tcp" | "udp") => async (b: number) => {
  await sleep(1000);
  await waitBound(b + 1, proto, 15_000);
};

type Kind = "tcp" | "udp" | "ipv6";
const kindOf = (c: OptionCase): Kind => (c.args.includes("-u") ? "udp" : c.args.includes("-6") ? "ipv6" : "tcp");
const receiverFlags: Record<Kind, string[]> = { tcp: ["-r"], udp: ["-r", "-u"], ipv6: ["-r::1", "-6"] };

/** Lane base b: sync port b, data ports from b + 1. */
const servers: Record<string, (kind: Kind) => (b: number) => ReturnType<typeof spawnProc>> = {
  "anyperf ntttcp -r -H": (kind) => (b) => spawnProc([...anyperf(), "ntttcp", ...receiverFlags[kind], "-H", "-P", "16", "-t", "1", "-p", String(b + 1)], 600_000),
  "anyperf serve": () => (b) =>
    spawnProc([...anyperf(), "serve", "-p", String(b + 17), "--ntttcp", String(b + 1), "--iperf", "off", "--iperf3", "off", "--netserver", "off"], 600_000, {
      ANYPERF_NTTTCP_TOKEN_OFFSET: String(TOKEN_OFFSET),
    }),
};

for (const [name, make] of Object.entries(servers)) {
  describe.skipIf(!REAL)(`stock ntttcp-for-linux sender, every option -> ${name}`, () => {
    test("every run ends (applied or refused with a line saying why) and the receiver serves the next test", async () => {
      const cases = ntttcpCases(file, cport);
      const outcomes: Outcome[] = [];
      const problems: string[] = [];
      // serve's ntttcp listens on IPv4 only (README): the -6 cases run against the dialect's receiver.
      const kinds = name === "anyperf serve" ? (["tcp", "udp"] as const) : (["tcp", "udp", "ipv6"] as const);
      const run = cases.filter((c) => kinds.some((k) => k === kindOf(c)));
      for (const kind of kinds) {
        const host = kind === "ipv6" ? "::1" : "127.0.0.1";
        const plainArgs = kind === "udp" ? ["-u"] : kind === "ipv6" ? ["-6"] : [];
        // -P 1 unless the case says otherwise (its own -P or -m comes later and wins): 1.4.3's 16 ports × 4 threads
        // would make every run 64 connections.
        const sender = (b: number, h: string, args: string[]) => [REAL!, `-s${h}`, "-p", String(b + 1), "-t", "1", "-P", "1", ...args];
        const table: Table = {
          server: make(kind),
          client: (b, c) => sender(b, c.host ?? host, c.args),
          plain: (b) => sender(b, host, plainArgs),
          cases: cases.filter((c) => kindOf(c) === kind),
          lanes: 3,
          ports: (n) => Array.from({ length: n }, () => lanePort()),
          readyOffset: 0,
          boundMs: 20_000,
          // A UDP receiver's data ports are UDP; serve's are TCP whatever comes.
          settle: settle(kind === "udp" && name !== "anyperf serve" ? "udp" : "tcp"),
        };
        const r = await runTable(table);
        outcomes.push(...r.outcomes);
        problems.push(...r.serverProblems, ...(await readmeDisagreements(table, r.outcomes, HEADING)));
      }
      console.log(`ntttcp-for-linux -> ${name}\n${report(outcomes)}`);
      expect({ hung: outcomes.filter((o) => o.hung).map((o) => o.option), problems }).toEqual({ hung: [], problems: [] });
      expect(outcomes.filter((o) => o.code !== 0 && o.last === "").map((o) => o.option)).toEqual([]);
      expect(outcomes.length).toBe(run.length);
      expect([...readmeTable(HEADING).keys()].filter((o) => !cases.some((c) => c.option === o))).toEqual([]);
    }, 900_000);
  });
}
