import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { xmlLeaves } from "../../compat/ntttcp/xml-tree.ts";
import { anyperf, dump, interruptAfter, scratch, sleep, tempLeftovers, waitFor, waitListening } from "./harness.ts";

/**
 * `anyperf ntttcp` under Ctrl+C and SIGTERM, both dialects, anyperf on both sides. ntttcp-for-linux 1.4.3
 * (docs/protocols/ntttcp-linux.md §7, capture ntttcp-linux-console-misc.txt I): Ctrl+C during a test logs "Interrupted
 * by Ctrl+C", ends the test early with its totals, and the sender's 'E' ends the receiver's test too; before a test it
 * exits 1. Ours exits 130 (SIGINT) / 143 (SIGTERM) after such a run, and its -x/-j/-O/-xml files are complete. Ports
 * 20100-20199 (Windows tokens at data port + 50).
 */

const T = 30_000;
const words = (s: string) => s.split(/\s+/).filter(Boolean);
const totalBytes = (out: string) => Number(/total bytes\t:(\d+)/.exec(out)?.[1] ?? NaN);
const leaf = (xml: string, path: string) => xmlLeaves(xml).find((l) => l.path === path)?.text;

test("Linux: SIGINT to the sender ends both sides' test early with totals and complete -x/-j/-O files", async () => {
  const dir = scratch();
  const rx = anyperf(["ntttcp", ...words("-r127.0.0.1 -P 1 -p 20101 -t 30 -x r.xml -j r.json -O r.log")], { cwd: dir });
  await waitListening(20100);
  const tx = anyperf(["ntttcp", ...words("-s127.0.0.1 -P 1 -n 1 -p 20101 -t 30 -x s.xml -j s.json")], { cwd: dir });
  try {
    await waitFor(tx, (o) => o.includes("Real-time throughput"));
    const s = await interruptAfter(tx, 800, "SIGINT");
    expect(s.code, dump(s)).toBe(130);
    const lines = s.stdout.split("\n").map((l) => l.replace(/^\d\d:\d\d:\d\d /, ""));
    const at = (t: string) => lines.indexOf(t);
    expect(at("INFO: Interrupted by Ctrl+C")).toBeGreaterThan(0);
    expect(at("INFO: Test run completed.")).toBe(at("INFO: Interrupted by Ctrl+C") + 1);
    expect(at("INFO: #####  Totals:  #####")).toBeGreaterThan(at("INFO: Test run completed."));
    expect(Number(/test duration\t:([\d.]+) seconds/.exec(s.stdout)![1])).toBeLessThan(10);
    const sent = totalBytes(s.stdout);
    expect(sent).toBeGreaterThan(0);
    expect(Math.round(Number(leaf(readFileSync(join(dir, "s.xml"), "utf8"), "ntttcps/total_bytes")) * 1e6)).toBe(sent);
    expect(Math.round(Number(JSON.parse(readFileSync(join(dir, "s.json"), "utf8")).ntttcps.totalBytes.value) * 1e6)).toBe(sent);

    const r = await rx.done;
    expect(r.code, dump(r)).toBe(0);
    expect(r.stdout).toContain("INFO: test exited because sender side was interrupted");
    const got = totalBytes(r.stdout);
    expect(Math.round(Number(leaf(readFileSync(join(dir, "r.xml"), "utf8"), "ntttcpr/total_bytes")) * 1e6)).toBe(got);
    expect(Math.round(Number(JSON.parse(readFileSync(join(dir, "r.json"), "utf8")).ntttcpr.totalBytes.value) * 1e6)).toBe(got);
    // -O: the log lines, in order, and nothing but them.
    const logged = r.stdout.split("\n").filter((l) => / (INFO|ERR|DBG): /.test(l));
    expect(readFileSync(join(dir, "r.log"), "utf8")).toBe(`${logged.join("\n")}\n`);
    expect(tempLeftovers(dir)).toEqual([]);
  } finally {
    rx.kill();
    tx.kill();
  }
}, T);

test("Linux: SIGTERM to the receiver mid-test prints its totals and writes its files; exit 143", async () => {
  const dir = scratch();
  const rx = anyperf(["ntttcp", ...words("-r127.0.0.1 -P 1 -p 20111 -t 30 -x r.xml -j r.json -O r.log")], { cwd: dir });
  await waitListening(20110);
  const tx = anyperf(["ntttcp", ...words("-s127.0.0.1 -P 1 -n 1 -p 20111 -t 30")], { cwd: dir });
  try {
    await waitFor(rx, (o) => o.includes("Real-time throughput"));
    const r = await interruptAfter(rx, 800, "SIGTERM");
    expect(r.code, dump(r)).toBe(143);
    expect(r.stdout).toContain("INFO: Interrupted by Ctrl+C");
    const got = totalBytes(r.stdout);
    expect(got).toBeGreaterThan(0);
    expect(Math.round(Number(leaf(readFileSync(join(dir, "r.xml"), "utf8"), "ntttcpr/total_bytes")) * 1e6)).toBe(got);
    expect(Math.round(Number(JSON.parse(readFileSync(join(dir, "r.json"), "utf8")).ntttcpr.totalBytes.value) * 1e6)).toBe(got);
    expect(readFileSync(join(dir, "r.log"), "utf8")).toContain("INFO: #####  Totals:  #####");
    const s = await tx.done;
    expect(s.stdout, dump(s)).toContain("INFO: #####  Totals:  #####");
    expect(tempLeftovers(dir)).toEqual([]);
  } finally {
    rx.kill();
    tx.kill();
  }
}, T);

test("Linux: Ctrl+C before any sender connected exits 1, as 1.4.3 does", async () => {
  const rx = anyperf(["ntttcp", ...words("-r127.0.0.1 -P 1 -p 20121 -t 30")]);
  await waitListening(20120);
  const r = await interruptAfter(rx, 0, "SIGINT");
  expect(r.code, dump(r)).toBe(1);
  expect(r.stderr).toContain("interrupted before the test started");
}, T);

const WINDOWS_ENV = { ANYPERF_NTTTCP_TOKEN_OFFSET: "50" };

test("Windows: SIGINT to the sender prints its tables; SIGTERM to a receiver appends a complete -xml document", async () => {
  const dir = scratch();
  // -xml appends: what the file held before must survive.
  writeFileSync(join(dir, "r.xml"), "<earlier/>\n");
  const rx = anyperf(["ntttcp", "--windows", ...words("-r -m 1,*,127.0.0.1 -p 20131 -t 30 -xml r.xml")], { cwd: dir, env: WINDOWS_ENV });
  const tx = anyperf(["ntttcp", "--windows", ...words("-s -m 1,*,127.0.0.1 -p 20131 -t 30")], { cwd: dir, env: WINDOWS_ENV });
  try {
    await waitFor(tx, (o) => o.includes("Network activity progressing..."));
    await sleep(1200);
    rx.signal("SIGTERM");
    const s = await interruptAfter(tx, 0, "SIGINT");
    const r = await rx.done;
    expect(r.code, dump(r)).toBe(143);
    const xml = readFileSync(join(dir, "r.xml"), "utf8");
    expect(xml.startsWith("<earlier/>\n<ntttcpr ")).toBe(true);
    const doc = xml.slice("<earlier/>\n".length);
    expect(Number(leaf(doc, "ntttcpr/total_bytes"))).toBeGreaterThan(0);
    expect(tempLeftovers(dir)).toEqual([]);
    expect(s.code, dump(s)).toBe(130);
    expect(s.stdout).toContain("Bytes(MEG)");
    expect(s.stdout).toContain("Packets Sent Packets Received Retransmits Errors Avg. CPU %");
  } finally {
    rx.kill();
    tx.kill();
  }
}, T);
