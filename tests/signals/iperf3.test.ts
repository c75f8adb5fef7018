import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { anyperf, dump, interruptAfter, scratch, stock, tempLeftovers, waitFor, waitListening, sleep } from "./harness.ts";

/**
 * `anyperf iperf3` under Ctrl+C and SIGTERM, against stock iperf3 3.12, compared with what 3.12 does: the client
 * prints the summary of what it got and "iperf3: interrupt - the client has terminated" (with -J: the document with
 * its "end" and that error), the server the same with "the server has terminated"; both exit 1. Ports 20200-20299.
 */

const T = 30_000;

test("client, text: summary of the partial test, the interrupt line, exit 1; the stock server sees the end", async () => {
  const srv = stock("iperf3", ["-s", "-1", "--forceflush", "-p", "20201"]);
  try {
    // Not a probe connection: the one-off server would take it for its client.
    await waitFor(srv, (o) => o.includes("Server listening"));
    const c = anyperf(["iperf3", "-c", "127.0.0.1", "-p", "20201", "-t", "30"]);
    await waitFor(c, (o) => /0\.00-1\.\d\d/.test(o));
    const f = await interruptAfter(c, 500, "SIGINT");
    expect(f.code, dump(f)).toBe(1);
    expect(f.stdout).toMatch(/0\.00-\d\.\d\d\s+sec\s+[\d.]+ GBytes.*sender/);
    expect(f.stdout).toMatch(/receiver\n/);
    expect(f.stderr).toBe("iperf3: interrupt - the client has terminated\n");
    const s = await srv.done;
    expect(s.code, dump(s)).toBe(0);
  } finally {
    srv.kill();
  }
}, T);

test("client, -J --logfile: the file holds one document with the partial 'end' and the interrupt error", async () => {
  const dir = scratch();
  const log = join(dir, "client.json");
  const srv = stock("iperf3", ["-s", "-1", "--forceflush", "-p", "20202"]);
  try {
    // Not a probe connection: the one-off server would take it for its client.
    await waitFor(srv, (o) => o.includes("Server listening"));
    const f = await interruptAfter(anyperf(["iperf3", "-c", "127.0.0.1", "-p", "20202", "-t", "30", "-J", "--logfile", log]), 1500, "SIGTERM");
    expect(f.code, dump(f)).toBe(1);
    expect(f.stdout).toBe("");
    const doc = JSON.parse(readFileSync(log, "utf8"));
    expect(doc.error).toBe("interrupt - the client has terminated");
    expect(doc.end.sum_sent.bytes).toBeGreaterThan(0);
    expect(doc.end.sum_sent.seconds).toBeLessThan(5);
    expect(doc.intervals.length).toBeGreaterThan(0);
    expect(tempLeftovers(dir)).toEqual([]);
  } finally {
    srv.kill();
  }
}, T);

test("server --logfile: intervals reach the log while the test runs; Ctrl+C ends it with the summary and exit 1", async () => {
  const dir = scratch();
  const log = join(dir, "server.log");
  const srv = anyperf(["iperf3", "-s", "-p", "20203", "--logfile", log]);
  await waitListening(20203);
  const cl = stock("iperf3", ["-c", "127.0.0.1", "-p", "20203", "-t", "30", "--forceflush"]);
  try {
    // The streaming log: each interval is published as it is printed, not at the end of the test.
    const deadline = performance.now() + 10_000;
    while (!(existsSync(log) && / 1\.\d\d-2\.\d\d /.test(readFileSync(log, "utf8")))) {
      if (performance.now() > deadline) throw new Error(`no interval in the log:\n${existsSync(log) ? readFileSync(log, "utf8") : "(none)"}`);
      await sleep(50);
    }
    const f = await interruptAfter(srv, 0, "SIGINT");
    expect(f.code, dump(f)).toBe(1);
    const text = readFileSync(log, "utf8");
    expect(text).toMatch(/\[ ID\] Interval\s+Transfer\s+Bitrate\n\[\s+5\]\s+0\.00-\d+\.\d\d\s+sec\s+[\d.]+ GBytes\s+[\d.]+ Gbits\/sec\s+receiver\n/);
    expect(text.endsWith("iperf3: interrupt - the server has terminated\n")).toBe(true);
    expect(text.match(/Server listening/g)).toHaveLength(1);
    const c = await cl.done;
    expect(c.code).toBe(1);
    expect(c.stderr + c.stdout).toContain("the server has terminated");
    expect(tempLeftovers(dir)).toEqual([]);
  } finally {
    srv.kill();
    cl.kill();
  }
}, T);

test("server -J: SIGTERM mid-test prints that test's document with its end and the interrupt error", async () => {
  const srv = anyperf(["iperf3", "-s", "-J", "-p", "20204"]);
  await waitListening(20204);
  const cl = stock("iperf3", ["-c", "127.0.0.1", "-p", "20204", "-t", "30", "--forceflush"]);
  try {
    await waitFor(cl, (o) => /0\.00-1\.\d\d/.test(o));
    const f = await interruptAfter(srv, 300, "SIGTERM");
    expect(f.code, dump(f)).toBe(1);
    const doc = JSON.parse(f.stdout);
    expect(doc.error).toBe("interrupt - the server has terminated");
    expect(doc.end.sum_received.bytes).toBeGreaterThan(0);
    expect((await cl.done).code).toBe(1);
  } finally {
    srv.kill();
    cl.kill();
  }
}, T);

test("idle server: the interrupt line (text) or an empty document with it (-J), exit 1", async () => {
  const text = anyperf(["iperf3", "-s", "-p", "20205"]);
  const json = anyperf(["iperf3", "-s", "-J", "-p", "20206"]);
  await Promise.all([waitListening(20205), waitListening(20206)]);
  const [a, b] = await Promise.all([interruptAfter(text, 0, "SIGINT"), interruptAfter(json, 0, "SIGTERM")]);
  expect(a.code, dump(a)).toBe(1);
  expect(a.stdout).toContain("Server listening on 20205 (test #1)");
  expect(a.stderr).toBe("iperf3: interrupt - the server has terminated\n");
  expect(b.code, dump(b)).toBe(1);
  const doc = JSON.parse(b.stdout);
  expect(doc.start.connected).toEqual([]);
  expect(doc.intervals).toEqual([]);
  expect(doc.end).toEqual({});
  expect(doc.error).toBe("interrupt - the server has terminated");
}, T);
