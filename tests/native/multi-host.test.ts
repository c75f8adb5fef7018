/**
 * `anyperf client H1 H2 H3` against three `anyperf serve` on loopback ports: one test across all of them, a row per
 * server, the whole run the sum of its servers, each server's figures the ones its own log names; a server that is
 * not there is named and the rest runs; an iperf3 server among them runs through its own protocol.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { Results } from "../../src/report/result.ts";
import { freePorts, sleep, spawnProc, waitFor, type Proc } from "../support/processes.ts";
import { anyperf, serveReady, spawnServe } from "../serve/harness.ts";

const running: Proc[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    s.kill();
    await s.done;
  }
});

/** `count` serves, each its native port only (iperf3 on `iperf3` ports where given). */
async function serves(count: number, iperf3 = false): Promise<{ ports: number[]; procs: Proc[]; iperf3Ports: number[] }> {
  const base = freePorts(31900, 31999, count * 2);
  const ports = Array.from({ length: count }, (_, i) => base + i);
  const iperf3Ports = iperf3 ? ports.map((p) => p + count) : [];
  const procs = ports.map((p, i) => spawnServe(["-p", String(p), "-B", "127.0.0.1", "--iperf3", iperf3 ? String(iperf3Ports[i]) : "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"]));
  running.push(...procs);
  await Promise.all(procs.map((s) => serveReady(s, iperf3 ? 2 : 1)));
  return { ports, procs, iperf3Ports };
}

const client = (args: string[]) => spawnProc([...anyperf(), "client", ...args], 60_000).done;

async function run(args: string[]): Promise<{ code: number | null; r: Results; stderr: string }> {
  const f = await client([...args, "--json"]);
  let doc: unknown;
  try {
    doc = JSON.parse(f.stdout);
  } catch {
    throw new Error(`no JSON (exit ${f.code}):\n${f.stdout}\n${f.stderr}`);
  }
  return { code: f.code, r: Results.parse(doc), stderr: f.stderr };
}

/** What each server's log says its test moved ("... done: N bytes received, M sent"). */
function logged(p: Proc): { received: number; sent: number } {
  const m = /done: (\d+) bytes received, (\d+) sent/.exec(p.stdout() + p.stderr());
  if (!m) throw new Error(`no 'done' line in the server's log:\n${p.stdout()}`);
  return { received: Number(m[1]), sent: Number(m[2]) };
}

const within = (a: number, b: number, pct: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual((Math.abs(b) * pct) / 100);

describe("anyperf client over many servers (loopback)", () => {
  test("three servers, -P 2 each: a row per server; the whole run is their sum; each server's bytes are its log's", async () => {
    const { ports, procs } = await serves(3);
    const { code, r } = await run([...ports.map((p) => `127.0.0.1:${p}`), "-t", "2", "-P", "2"]);
    expect(code).toBe(0);
    expect(r.errors).toEqual([]);
    expect(r.hosts!.map((h) => [h.host, h.port, h.peer])).toEqual(ports.map((p) => ["127.0.0.1", p, "anyperf"]));
    for (const [i, h] of r.hosts!.entries()) {
      expect(h.remote!.streams.filter((s) => s.side === "recv")).toHaveLength(2);
      expect(h.summary!.bytes).toBeGreaterThan(1e6);
      // Only this host sends: the server's receiver leads, this host's own streams are the sender.
      expect(h.summary!.bytes).toBe(h.remote!.summary!.bytes);
      expect(h.sender!.bytes).toBeGreaterThan(0);
      expect(h.remote!.totals.received_bytes).toBe(logged(procs[i]!).received);
    }
    within(r.summary.bytes, r.hosts!.reduce((a, h) => a + h.summary!.bytes, 0), 0.5);
    within(r.summary.throughput_bps, r.hosts!.reduce((a, h) => a + h.summary!.throughput_bps, 0), 0.5);
    // One window for every server: ours, and each server's cut on its edges.
    for (const h of r.hosts!) within(h.remote!.summary!.seconds, r.summary.seconds, 5);
    // Every byte this host sent reached its server.
    expect(r.totals.sent_bytes).toBe(r.hosts!.reduce((a, h) => a + h.remote!.totals.received_bytes!, 0));
    expect(r.streams.filter((s) => s.side === "send")).toHaveLength(6);
  });

  test("-R: every server sends to this host; each server's part of the one window adds up to the whole", async () => {
    const { ports, procs } = await serves(2);
    const { code, r } = await run([...ports.map((p) => `127.0.0.1:${p}`), "-t", "2", "-R"]);
    expect(code).toBe(0);
    within(r.summary.bytes, r.hosts!.reduce((a, h) => a + h.summary!.bytes, 0), 0.5);
    for (const [i, h] of r.hosts!.entries()) {
      expect(h.summary!.bytes).toBeGreaterThan(1e6);
      expect(h.remote!.streams.map((s) => s.side)).toEqual(["send"]);
      expect(h.remote!.totals.sent_bytes).toBe(logged(procs[i]!).sent);
    }
    expect(r.totals.received_bytes).toBe(r.hosts!.reduce((a, h) => a + h.remote!.totals.sent_bytes!, 0));
  });

  test("--rr across all, from a --hosts file; a server that is not there is named, the rest runs, exit 1", async () => {
    const { ports } = await serves(2);
    const absent = freePorts(31900, 31999, 1);
    const path = `/tmp/anyperf-hosts-${process.pid}`;
    await Bun.write(path, `# helpers\n127.0.0.1:${ports[1]}\n127.0.0.1:${absent}\n`);
    const { code, r } = await run([`127.0.0.1:${ports[0]}`, "--hosts", path, "-t", "2", "--rr", "1,1"]).finally(() => rmSync(path, { force: true }));
    expect(code).toBe(1);
    expect(r.hosts!.map((h) => h.port)).toEqual([ports[0]!, ports[1]!, absent]);
    expect(r.hosts![2]!.summary).toBeUndefined();
    expect(r.hosts![2]!.error).toMatch(new RegExp(`connection to 127.0.0.1:${absent} refused`));
    expect(r.errors).toEqual([r.hosts![2]!.error!]);
    const live = r.hosts!.slice(0, 2);
    for (const h of live) expect(h.summary!.transactions).toBeGreaterThan(100);
    expect(r.summary.transactions).toBe(live.reduce((a, h) => a + h.summary!.transactions!, 0));
    within(r.summary.transactions_per_second!, live.reduce((a, h) => a + h.summary!.transactions_per_second!, 0), 0.5);
  });

  test("an iperf3 server beside serve runs through its own protocol over one common window; what it cannot carry is refused before any test runs", async () => {
    const { ports, iperf3Ports } = await serves(1, true);
    const { code, r } = await run([`127.0.0.1:${ports[0]}`, `127.0.0.1:${iperf3Ports[0]}`, "-t", "2", "-P", "2"]);
    expect(code).toBe(0);
    expect(r.hosts!.map((h) => h.peer)).toEqual(["anyperf", "iperf3"]);
    const [native, ip3] = r.hosts!;
    expect(ip3!.remote!.peer).toEqual({ name: "iperf3" });
    // Its row is this host's senders cut on the common window; its own count over its own window is remote.
    expect(ip3!.summary!.seconds).toBe(r.summary.seconds);
    expect(ip3!.summary!.bytes).toBeLessThanOrEqual(ip3!.remote!.summary!.bytes);
    expect(r.streams).toHaveLength(4);
    expect(r.summary.bytes).toBe(native!.summary!.bytes + ip3!.summary!.bytes);
    const rr = await client([`127.0.0.1:${ports[0]}`, `127.0.0.1:${iperf3Ports[0]}`, "--rr", "1,1"]);
    expect(rr.code).toBe(2);
    expect(rr.stderr.trim()).toBe("anyperf: --rr cannot be run against an iperf3 server: it has no request/response test; use --peer netperf against a netserver");
  });

  test("a server that drops out mid-test is named; the others run to the end of the window; exit 1", async () => {
    const { ports, procs } = await serves(2);
    const c = spawnProc([...anyperf(), "client", ...ports.map((p) => `127.0.0.1:${p}`), "-t", "4", "--json"], 60_000);
    await waitFor(() => procs[1]!.stdout(), /test \d+ from .*: tcp stream forward/, 20_000);
    await sleep(1000);
    procs[1]!.kill("SIGKILL");
    const f = await c.done;
    expect(f.code).toBe(1);
    const r = Results.parse(JSON.parse(f.stdout));
    expect(r.hosts![1]!.error).toBe(`127.0.0.1:${ports[1]}: the server closed the control connection (phase running); see the server's log`);
    expect(r.hosts![1]!.summary).toBeUndefined();
    expect(r.hosts![0]!.error).toBeUndefined();
    expect(r.summary.seconds).toBeGreaterThan(3.5);
    expect(r.summary.bytes).toBe(r.hosts![0]!.summary!.bytes);
    expect(r.errors).toEqual([r.hosts![1]!.error!]);
  });

  test("Ctrl+C prints what every server measured so far, exit 130", async () => {
    const { ports, procs } = await serves(2);
    const c = spawnProc([...anyperf(), "client", ...ports.map((p) => `127.0.0.1:${p}`), "-t", "30", "--json"], 60_000);
    await Promise.all(procs.map((p) => waitFor(() => p.stdout(), /test \d+ from .*: tcp stream forward/, 20_000)));
    await sleep(1500);
    c.kill("SIGINT");
    const f = await c.done;
    expect(f.code).toBe(130);
    const r = Results.parse(JSON.parse(f.stdout));
    expect(r.interrupted).toBe(true);
    for (const h of r.hosts!) expect(h.summary!.bytes).toBeGreaterThan(0);
    expect(r.summary.seconds).toBeLessThan(10);
  });
});
