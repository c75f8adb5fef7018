/**
 * `anyperf client --responsiveness` between two network namespaces on a veth shaped by tc tbf to 50 Mbit/s on both
 * ends: with a deep queue (tbf latency 200 ms) the load fills it and the probe waits in it, each way; with a shallow
 * one (4 ms) it cannot. The bucket is small (15 kB) so the queue is what tbf's latency says, not a 256 kB burst more.
 * The tbf is on the sending host's own interface, where TCP Small Queues let each socket hold only a few tens of kB
 * in the qdisc: 8 streams are what builds a queue of tens of ms there (a router's queue would take all they send).
 * Ports are picked free at run time from 32000-32999.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Responsiveness } from "../../src/native/responsiveness-report.ts";
import { makePair, netnsSkipReason, type NetnsPair } from "../support/netns.ts";
import { freePorts, jsonDoc, spawnProc } from "../support/processes.ts";
import { readHistory } from "../../src/procedure/history.ts";
import { ResponsivenessSpread } from "../../src/native/responsiveness-runs.ts";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "main.ts");
const BUN = process.execPath;
const T = 180_000;

const SKIP = netnsSkipReason();
if (SKIP) console.warn(`tests/netns skipped: ${SKIP}`);

const Doc = z.object({ responsiveness: Responsiveness });
const RepeatDoc = z.object({ runs: z.array(z.object({ responsiveness: Responsiveness })), aggregate: ResponsivenessSpread });
const SweepDoc = z.object({ points: z.array(RepeatDoc.extend({ point: z.record(z.string(), z.string()) })), best: z.record(z.string(), z.string()).nullable() });

/** A pair shaped to 50 Mbit/s with this tbf latency, a serve in b; the client's --json document. */
function shaped(tag: string, latency: string, streams: number) {
  let pair: NetnsPair;
  let port = 0;
  beforeAll(async () => {
    pair = makePair({ tag, rate: "50mbit", burst: "15kb", latency });
    port = freePorts(32000, 33000, 1);
    const serve = pair.run(pair.b, [BUN, MAIN, "serve", "-p", String(port), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 600_000);
    await pair.waitListening(pair.b, port, serve);
  }, T);
  afterAll(() => pair?.teardown());
  const client = (args: string[]) => pair.run(pair.a, [BUN, MAIN, "client", pair.b.addr, "-p", String(port), "--responsiveness", "-P", String(streams), ...args], 120_000).done;
  const run = async () => {
    const c = await client(["-t", "3", "--json", "--no-history"]);
    expect(c.code, c.stderr).toBe(0);
    const r = jsonDoc(Doc, c).responsiveness;
    const p50 = (n: "idle" | "upload" | "download" | "bidir") => r[n]!.latency_us.p50;
    const ping = (n: "idle" | "upload" | "download" | "bidir") => `${r[n]!.udp_latency_us?.p50} (${r[n]!.udp_pings})`;
    console.log(`tbf 50 Mbit/s, latency ${latency}: p50 idle ${p50("idle")} µs, upload ${p50("upload")}, download ${p50("download")}, bidir ${p50("bidir")}; UDP pings p50 (answered) idle ${ping("idle")}, upload ${ping("upload")}, download ${ping("download")}, bidir ${ping("bidir")}; RPM ${r.rpm}; ${r.evidence.join(" | ")}`);
    return r;
  };
  return { run, client };
}

describe.skipIf(SKIP !== undefined)("--responsiveness, tbf 50 Mbit/s with a 200 ms queue", () => {
  const { run, client } = shaped("r200", "200ms", 8);
  test("loaded p50 at least 20 ms both ways, idle under 5 ms; the grown queue named by direction", async () => {
    const r = await run();
    expect(r.idle!.latency_us.p50).toBeLessThan(5_000);
    // The UDP pings wait in the same queues as the TCP probe.
    expect(r.idle!.udp_latency_us!.p50).toBeLessThan(5_000);
    for (const n of ["upload", "download", "bidir"] as const) {
      expect(r[n]!.udp_latency_us!.p50).toBeGreaterThanOrEqual(20_000);
      expect(r[n]!.latency_us.p50).toBeGreaterThanOrEqual(20_000);
      expect(r[n]!.added_latency_us!).toBeGreaterThan(15_000);
      // The load filled the shaped path: tbf's rate, less headers.
      expect(r[n]!.throughput_bps).toBeGreaterThan(40e6);
    }
    expect(r.rpm).toBeLessThan(3_000);
    expect(r.evidence[0]).toStartWith("upload: client → server (upload) queue grew");
    // Read over rtnetlink while the probe measured: this host's tbf held the upload's queue; downloading, only ACKs.
    expect(r.evidence[0]).toContain("this host's tbf on veth-a held ");
    expect(r.upload!.client_qdisc!.backlog_bytes).toBeGreaterThan(50_000);
    expect(r.download!.client_qdisc!.backlog_bytes).toBeLessThan(r.upload!.client_qdisc!.backlog_bytes);
    expect(r.evidence[1]).toStartWith("download: server → client (download) queue grew");
    // The serve read its own tbf over the download's window and reported it in its result.
    expect(r.download!.server_qdisc!.backlog_bytes).toBeGreaterThan(50_000);
    expect(r.evidence[1]).toContain("the server's tbf on veth-b held ");
    expect(r.upload!.server_qdisc).toBeUndefined();
    expect(r.evidence[2]).toStartWith("bidir: queues grew: the upload flows' RTT ");
  }, T);

  test("--sweep rate=1M,20M: each point the whole sequence at its -b; paced below the path the queue stays empty, above it fills; history and report carry the points", async () => {
    const history = join(mkdtempSync(join(tmpdir(), "anyperf-resp-")), "h.jsonl");
    const c = await client(["-t", "2", "--sweep", "rate=1M,20M", "--history", history, "--json"]);
    expect(c.code, c.stderr).toBe(0);
    const doc = jsonDoc(SweepDoc, c);
    expect(doc.points.map((p) => p.point)).toEqual([{ rate: "1M" }, { rate: "20M" }]);
    const [slow, fast] = doc.points.map((p) => p.runs[0]!.responsiveness);
    for (const n of ["upload", "download", "bidir"] as const) {
      console.log(`--sweep rate: ${n} p50 ${slow![n]!.latency_us.p50} µs at 8 x 1 Mbit/s, ${fast![n]!.latency_us.p50} µs at 8 x 20 Mbit/s`);
      expect(slow![n]!.latency_us.p50).toBeLessThan(10_000);
      expect(fast![n]!.latency_us.p50).toBeGreaterThanOrEqual(20_000);
    }
    // 8 streams paced at 1 Mbit/s each: the load is the pace, not the path.
    expect(slow!.upload!.throughput_bps).toBeGreaterThan(6e6);
    expect(slow!.upload!.throughput_bps).toBeLessThan(10e6);
    expect(fast!.upload!.throughput_bps).toBeGreaterThan(40e6);
    expect(doc.best).toEqual({ rate: "1M" });
    const lines = readHistory(history);
    expect(lines.map((e) => [e.test, e.point, e.repeat])).toEqual([["responsiveness", { rate: "1M" }, 1], ["responsiveness", { rate: "20M" }, 1]]);
    expect(lines[0]!.group).toBe(lines[1]!.group!);
    expect(lines[1]!.argv.slice(-2)).toEqual(["-b", "20M"]);
    const html = join(history, "..", "report.html");
    const rep = await spawnProc([BUN, MAIN, "report", "--history", history, "-o", html]).done;
    expect(rep.code, rep.stderr).toBe(0);
    const text = readFileSync(html, "utf8");
    expect(text).toContain("Sweep rate (group ");
    expect(text).toContain("median bidir latency p50");
  }, T);
});

describe.skipIf(SKIP !== undefined)("--responsiveness, tbf 50 Mbit/s with a 4 ms queue", () => {
  const { run, client } = shaped("r4", "4ms", 4);
  test("loaded p50 under 15 ms", async () => {
    const r = await run();
    for (const n of ["upload", "download", "bidir"] as const) {
      expect(r[n]!.latency_us.p50).toBeLessThan(15_000);
      expect(r[n]!.udp_latency_us!.p50).toBeLessThan(15_000);
      expect(r[n]!.throughput_bps).toBeGreaterThan(30e6);
    }
  }, T);

  test("--repeat 2: each run a full sequence, the spread per phase; each run a history line of kind responsiveness; compare sets their phases side by side", async () => {
    const history = join(mkdtempSync(join(tmpdir(), "anyperf-resp-")), "h.jsonl");
    const c = await client(["-t", "1", "--warmup", "1", "--repeat", "2", "--history", history, "--json"]);
    expect(c.code, c.stderr).toBe(0);
    const doc = jsonDoc(RepeatDoc, c);
    expect(doc.runs).toHaveLength(2);
    for (const r of doc.runs) expect(Object.keys(r.responsiveness).filter((k) => k !== "evidence" && k !== "rpm")).toEqual(["idle", "upload", "download", "bidir"]);
    expect(doc.aggregate.bidir!.latency_p50_us!.n).toBe(2);
    expect(doc.aggregate.upload!.throughput_bps!.min).toBeGreaterThan(30e6);
    const lines = readHistory(history);
    expect(lines.map((e) => [e.test, e.repeat])).toEqual([["responsiveness", 1], ["responsiveness", 2]]);
    expect(lines[0]!.group).toBe(lines[1]!.group!);
    expect(lines[1]!.responsiveness!.bidir!.latency_us.p50).toBe(doc.runs[1]!.responsiveness.bidir!.latency_us.p50);
    const cmp = await spawnProc([BUN, MAIN, "compare", lines[0]!.id, lines[1]!.id, "--history", history]).done;
    expect(cmp.code, cmp.stderr).toBe(0);
    expect(cmp.stdout).toMatch(/^bidir p50 +\d/m);
    expect(cmp.stdout).toMatch(/^upload throughput +\d/m);
  }, T);
});
