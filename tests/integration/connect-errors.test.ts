/**
 * Issue 21 item 17 (and item 2's "a timeout says timed out"): a failed connect reports its real errno with advice
 * that fits it. Bun reports every failed connect as ECONNREFUSED, so "start the server there first" came out for
 * an unreachable network too. All traffic stays inside a network namespace this test makes (aplost-…): a veth
 * pair with no default route; 10.99.0.1 has no route (ENETUNREACH), 10.98.0.2 gets no ARP answer (EHOSTUNREACH),
 * 10.98.0.3 has a fixed neighbour that drops every SYN (ETIMEDOUT after tcp_syn_retries=1, about 3 s); 10.97/16 is a
 * prohibit route (EACCES), 10.96/16 a blackhole (EINVAL), 10.95/16 an unreachable route (EHOSTUNREACH).
 * Ports 33400-33499 (inside the namespace).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hasTool, spawnProc } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const NS = `aplost-e${process.pid}`;
const root = process.getuid?.() === 0 && hasTool(["ip", "-V"], /iproute2/);
const ip = (...args: string[]) => {
  const r = Bun.spawnSync(["ip", ...args], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr.toString()}`);
};
const inNs = (cmd: string[]) => spawnProc(["ip", "netns", "exec", NS, ...cmd], 40_000).done;
const ours = (args: string[]) => inNs([process.execPath, MAIN, ...args]);

const UNREACHABLE_NET = "10.99.0.1";
const NO_NEIGHBOUR = "10.98.0.2";
const DROPS_SYN = "10.98.0.3";

describe.skipIf(!root)("connect errors name the real cause", () => {
  beforeAll(() => {
    ip("netns", "add", NS);
    const x = (...a: string[]) => ip("-n", NS, ...a);
    x("link", "set", "lo", "up");
    x("link", "add", "aplost-va", "type", "veth", "peer", "name", "aplost-vb");
    x("addr", "add", "10.98.0.1/24", "dev", "aplost-va");
    x("link", "set", "aplost-va", "up");
    x("link", "set", "aplost-vb", "up");
    x("neigh", "add", DROPS_SYN, "lladdr", "02:00:00:00:00:03", "dev", "aplost-va", "nud", "permanent");
    x("route", "add", "prohibit", "10.97.0.0/16");
    x("route", "add", "blackhole", "10.96.0.0/16");
    x("route", "add", "unreachable", "10.95.0.0/16");
  });
  afterAll(() => {
    Bun.spawnSync(["ip", "netns", "del", NS]);
  });

  const causes = [
    { host: UNREACHABLE_NET, text: "Network is unreachable", advice: /check the address, or the routes/ },
    { host: NO_NEIGHBOUR, text: "No route to host", advice: /check that the host is up/ },
  ];
  for (const c of causes) {
    test(`${c.text}: iperf3 says it as 3.12 does`, async () => {
      const f = await ours(["iperf3", "-c", c.host, "-p", "33401", "-t", "1"]);
      expect(f.code).toBe(1);
      expect(f.stderr).toBe(`iperf3: error - unable to connect to server: ${c.text}\n`);
      if (hasTool(["iperf3", "-v"], /iperf 3/)) expect((await inNs(["iperf3", "-c", c.host, "-p", "33401", "-t", "1"])).stderr).toBe(f.stderr);
    }, 30_000);

    for (const argv of [["iperf", "-c", c.host, "-p", "33402", "-t", "1"], ["ntttcp", `-s${c.host}`, "-p", "33403", "-t", "1"], ["ntttcp", `-s${c.host}`, "-p", "33403", "-t", "1", "-N"]]) {
      test(`${c.text}: ${argv.join(" ")}`, async () => {
        const f = await ours(argv);
        expect(f.code).not.toBe(0);
        const last = f.stderr.trim().split("\n").at(-1)!;
        expect(last).toContain(c.text);
        expect(last).toMatch(c.advice);
        expect(f.stdout + f.stderr).not.toMatch(/refused|start the (server|receiver)/);
      }, 30_000);
    }
  }

  // anyperf client's own control connection (issue 29 item 2: it said "refused" or "Failed to connect").
  const native = [
    { host: UNREACHABLE_NET, line: "cannot connect to 10.99.0.1:33406: Network is unreachable (no route to its network): check the address, or the routes and default gateway (ip route)" },
    { host: NO_NEIGHBOUR, line: "cannot connect to 10.98.0.2:33406: No route to host (no answer for that address on its network, or an unreachable route): check that the host is up, the address is right and the routes (ip route get 10.98.0.2)" },
    { host: "10.95.0.1", line: "cannot connect to 10.95.0.1:33406: No route to host (no answer for that address on its network, or an unreachable route): check that the host is up, the address is right and the routes (ip route get 10.95.0.1)" },
    { host: "10.97.0.1", line: "cannot connect to 10.97.0.1:33406: prohibited (a prohibit route or a firewall rule refuses it): check the routes (ip route) and the firewall" },
    { host: "10.96.0.1", line: "cannot connect to 10.96.0.1:33406: the route to it discards everything (a blackhole route): check the routes (ip route get 10.96.0.1)" },
    { host: "127.0.0.1", line: "connection to 127.0.0.1:33406 refused: start 'anyperf serve' there, or pass its port with -p (native default 5300)" },
  ];
  for (const c of native) {
    test(`anyperf client ${c.host}: the errno's meaning and the fix, one line`, async () => {
      const f = await ours(["client", c.host, "-p", "33406", "-t", "1"]);
      expect(f.code).toBe(1);
      expect(f.stderr).toBe(`anyperf: ${c.line}\n`);
    }, 30_000);
  }

  // Last: fewer SYN retries would also end the ARP cases above before their EHOSTUNREACH.
  test("a connect whose SYNs are dropped says timed out, not refused (iperf, iperf3, ntttcp)", async () => {
    const r = Bun.spawnSync(["ip", "netns", "exec", NS, "sysctl", "-qw", "net.ipv4.tcp_syn_retries=1"]);
    expect(r.exitCode).toBe(0);
    const runs = await Promise.all([
      ours(["iperf", "-c", DROPS_SYN, "-p", "33404", "-t", "1"]),
      ours(["iperf3", "-c", DROPS_SYN, "-p", "33404", "-t", "1"]),
      ours(["ntttcp", `-s${DROPS_SYN}`, "-p", "33405", "-t", "1"]),
      ours(["client", DROPS_SYN, "-p", "33406", "-t", "1"]),
    ]);
    for (const f of runs) {
      expect(f.code).not.toBe(0);
      expect(f.stdout + f.stderr).toMatch(/timed out/);
      expect(f.stdout + f.stderr).not.toMatch(/refused|start the (server|receiver)/);
    }
  }, 40_000);
});
