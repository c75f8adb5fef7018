/**
 * The diagnosis from the sockets themselves, between two network namespaces on a veth shaped by tc tbf to 300 Mbit/s
 * on both ends, with no --link-speed (a veth's own speed is nominal): the tbf read from the kernel over rtnetlink and
 * the sending sockets' TCP_INFO (chrono stats, delivery rate) must name the link and its rate, and a -b below the path
 * the sender's pace. A small -w on an unshaped veth: the window.
 * Then a serve on an unshaped veth under a cgroup CPU quota of 5 % of a core (a pod's CPU limit): the receiver's CPU,
 * throttled. Ports are picked free at run time from 32000-32999.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { z } from "zod";
import { Diagnosis } from "../../src/diagnosis/schema.ts";
import { makePair, netnsSkipReason, type NetnsPair } from "../support/netns.ts";
import { freePorts, jsonDoc, spawnProc, type Finished, type Proc } from "../support/processes.ts";
import { cgroupSkipReason, makeQuotaCgroup, type QuotaCgroup } from "../support/cgroup.ts";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "main.ts");
const BUN = process.execPath;
const RATE = 300e6;
const T = 120_000;

const SKIP = netnsSkipReason();
if (SKIP) console.warn(`tests/netns skipped: ${SKIP}`);
const NO_CGROUP = SKIP ?? cgroupSkipReason();
if (NO_CGROUP && !SKIP) console.warn(`tests/netns diagnosis: the CPU quota test is skipped: ${NO_CGROUP}`);

const ClientDoc = z.object({ summary: z.object({ throughput_bps: z.number() }), diagnosis: Diagnosis });
type ClientDoc = z.infer<typeof ClientDoc>;

const doc = (f: Finished): ClientDoc => jsonDoc(ClientDoc, f);

/** The verdict and its evidence in one string, so a failed expectation shows why the diagnosis said what it said. */
const said = (d: ClientDoc) => `${d.diagnosis.verdict}: ${d.diagnosis.evidence.join(" | ")}`;

describe.skipIf(SKIP !== undefined)("diagnosis from the sockets, tbf 300 Mbit/s, no --link-speed", () => {
  let pair: NetnsPair;
  let port = 0;
  beforeAll(async () => {
    pair = makePair({ tag: "d", rate: "300mbit" });
    port = freePorts(32000, 33000, 1);
    const serve = pair.run(pair.b, [BUN, MAIN, "serve", "-p", String(port), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 600_000);
    await pair.waitListening(pair.b, port, serve);
  }, T);
  afterAll(() => pair?.teardown());

  const client = async (...args: string[]) => {
    const c = await pair.run(pair.a, [BUN, MAIN, "client", pair.b.addr, "-p", String(port), "-t", "4", "--json", ...args], 60_000).done;
    expect(c.code, c.stderr).toBe(0);
    return doc(c);
  };

  test("link: the sender network-limited, the bottleneck within 10 % of the shaper's rate, both directions", async () => {
    for (const args of [[], ["-R"]]) {
      const d = await client(...args);
      console.log(`tbf 300 Mbit/s ${args.join(" ")}: ${said(d)}`);
      expect(said(d)).toStartWith("link: ");
      // The veth's nominal speed is not the link; its tbf, read over rtnetlink, is.
      expect(d.diagnosis.link_bps).toBe(RATE);
      // Named in the evidence: as the link's source at 90 % of it or more, else beside the path's rate.
      expect(said(d)).toMatch(/\(veth-a, from its tbf qdisc\)|veth-a shaped by tbf to 300 Mbit\/s/);
      expect(Math.abs(d.diagnosis.bottleneck_bps! - RATE) / RATE).toBeLessThan(0.1);
      expect(d.diagnosis.sender_time!.network_percent).toBeGreaterThan(50);
      // tbf's queue (latency 5 ms) fills: the run added milliseconds over a veth's microseconds.
      expect(d.diagnosis.queueing_delay_us).toBeGreaterThan(500);
    }
  }, T);

  test("--rr 1,1: a veth's microseconds are not what limits a 1-byte request/response, the ends are", async () => {
    const d = await client("--rr", "1,1");
    console.log(`tbf 300 Mbit/s --rr 1,1: ${said(d)}`);
    expect(["sender-cpu", "receiver-cpu"]).toContain(d.diagnosis.verdict);
    // Each end's processing per transaction, or a core anyperf saturated: either way an end, named with its figures.
    expect(d.diagnosis.evidence[0]).toMatch(/^request\/response: .*not the network, sets the rate|^(sender|receiver) CPU \d+ at /);
  }, T);

  test("-b below the path: nothing limited, the sender's pace named", async () => {
    const d = await client("-b", "50M");
    console.log(`tbf 300 Mbit/s -b 50M: ${said(d)}`);
    expect(d.diagnosis.evidence[0]).toStartWith("nothing limited: the sender kept its -b pace 50.0 Mbit/s");
    expect(d.diagnosis.sender_time!.application_percent).toBeGreaterThan(50);
  }, T);
});

// A window's limit is window ÷ RTT: on the 300 Mbit/s veth above, 4 KiB over its ~140 µs RTT is ~270 Mbit/s, the
// link's rate within its noise, and the verdict flipped between window and link. Unshaped, the same window holds the
// sender far below what the veth carries.
describe.skipIf(SKIP !== undefined)("diagnosis from the sockets, unshaped veth", () => {
  let pair: NetnsPair;
  let port = 0;
  beforeAll(async () => {
    pair = makePair({ tag: "w" });
    port = freePorts(32000, 33000, 1);
    const serve = pair.run(pair.b, [BUN, MAIN, "serve", "-p", String(port), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 600_000);
    await pair.waitListening(pair.b, port, serve);
  }, T);
  afterAll(() => pair?.teardown());

  test("-w 4K: window, the sender held by the windows", async () => {
    const c = await pair.run(pair.a, [BUN, MAIN, "client", pair.b.addr, "-p", String(port), "-t", "4", "--json", "-w", "4K"], 60_000).done;
    expect(c.code, c.stderr).toBe(0);
    const d = doc(c);
    console.log(`unshaped veth -w 4K: ${said(d)}`);
    expect(said(d)).toStartWith("window: ");
    // The kernel's chrono counts a buffer wholly in flight as network time (21-45 % rwnd-limited seen): the buffer
    // against what was in flight decides, and is named.
    expect(d.diagnosis.window_bytes).toBe(4096);
    expect(said(d)).toContain("socket buffer 4.00 KiB, in flight ");
  }, T);

});

describe.skipIf(NO_CGROUP !== undefined)("diagnosis: a serve under a cgroup CPU quota", () => {
  let pair: NetnsPair;
  let serve: Proc | undefined;
  let cgroup: QuotaCgroup | undefined;
  let port = 0;
  beforeAll(async () => {
    pair = makePair({ tag: "q" });
    port = freePorts(32000, 33000, 1);
    // Only the network namespace is entered: \`ip netns exec\` would mount a /sys of its own, without /sys/fs/cgroup,
    // and the serve could not read its cgroup (a pod sees its own).
    serve = spawnProc(["nsenter", `--net=/var/run/netns/${pair.b.ns}`, BUN, MAIN, "serve", "-p", String(port), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 600_000);
    await pair.waitListening(pair.b, port, serve);
    // Started at full speed, then limited: a Bun start-up at 5 % of a core takes seconds.
    cgroup = makeQuotaCgroup("serve", 0.05);
    cgroup.add(serve.pid);
  }, T);
  afterAll(async () => {
    serve?.kill("SIGKILL");
    await serve?.done;
    await cgroup?.remove();
    pair?.teardown();
  });

  test("receiver-cpu, the evidence saying throttled by its quota", async () => {
    const c = await pair.run(pair.a, [BUN, MAIN, "client", pair.b.addr, "-p", String(port), "-t", "4", "--json"], 60_000).done;
    expect(c.code, c.stderr).toBe(0);
    const d = doc(c);
    console.log(`serve at 5 % of a core: ${d.summary.throughput_bps} bit/s, ${said(d)}`);
    expect(said(d)).toStartWith("receiver-cpu: receiver throttled by its cgroup's CPU quota in ");
    expect(d.diagnosis.evidence[0]).toContain("quota 0.05 of a core");
  }, T);
});
