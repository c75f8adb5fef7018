import { afterAll, beforeAll, expect, test } from "bun:test";
import { Results } from "../src/report/result.ts";
import { TestView } from "../src/status/schema.ts";
import { spawnProc } from "./support/processes.ts";

/**
 * One retransmit figure (issue 21 item 13): the test's own sockets' TCP_INFO retransmits over the measured window,
 * the same in the results' top level, summary, sender and receiver, in /status and in the text; none for UDP. The
 * run takes place in a namespace of its own whose lo (MTU 1500) goes through a small token bucket, so TCP loses
 * segments and retransmits them without touching the host's loopback.
 */

const NS = `anyperf-rt-${process.pid}`;
const root = process.getuid?.() === 0 && Bun.spawnSync(["ip", "netns", "list"], { stdout: "pipe", stderr: "pipe" }).exitCode === 0;
const ip = (...args: string[]) => {
  const r = Bun.spawnSync(["ip", ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr.toString()}`);
};

beforeAll(() => {
  if (!root) return;
  ip("netns", "add", NS);
  ip("netns", "exec", NS, "ip", "link", "set", "lo", "mtu", "1500", "up");
  ip("netns", "exec", NS, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "200mbit", "burst", "32k", "limit", "24k");
});
afterAll(() => {
  if (root) Bun.spawnSync(["ip", "netns", "del", NS]);
});

async function runIn(transport: "tcp" | "udp"): Promise<{ results: Results; view: TestView; text: string }> {
  const script = new URL("./fixtures/retransmits/run-in-netns.ts", import.meta.url).pathname;
  const p = spawnProc(["ip", "netns", "exec", NS, process.execPath, script, transport], 60_000);
  const out = await p.done;
  if (out.code !== 0) throw new Error(`run failed (${out.code}): ${out.stderr}`);
  const doc = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { results: unknown; view: unknown; text: string };
  return { results: Results.parse(doc.results), view: TestView.parse(doc.view), text: doc.text };
}

test.skipIf(!root)("TCP: one retransmit figure in results, summary, sender, receiver, /status and the text", async () => {
  const { results, view, text } = await runIn("tcp");
  const n = results.retransmits;
  expect(n).toBeGreaterThan(0);
  expect(results.summary.retransmits).toBe(n!);
  expect(results.sender?.retransmits).toBe(n!);
  expect(results.receiver?.retransmits).toBe(n!);
  expect(view.retransmits).toBe(n!);
  expect(text).toContain(`TCP retransmits ${n}`);
  // The streams' own figures add up to the test's.
  expect(results.streams.reduce((a, s) => a + (s.retransmits ?? 0), 0)).toBe(n!);
}, 90_000);

test.skipIf(!root)("UDP: no TCP retransmit figure at all (the host's RetransSegs is not the test's)", async () => {
  const { results, view, text } = await runIn("udp");
  expect(results.retransmits).toBeUndefined();
  expect(results.summary.retransmits).toBeUndefined();
  expect(view.retransmits).toBeUndefined();
  expect(text).not.toContain("retransmits");
}, 90_000);
