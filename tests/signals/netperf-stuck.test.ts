/**
 * Issue 21 items 4, 16 and 2 for `anyperf netperf`: SIGALRM (scripts end long runs with `kill -ALRM`; netperf's own
 * timer is SIGALRM) ends the test with its results and exit 0, as stock netperf; a netserver that accepts and never
 * answers no longer holds SIGTERM (143 at once, as stock) or the first SIGINT; Ctrl+C while the connect waits on a
 * full backlog exits at once. Ports 33200-33299, free ones picked at run time (silent peers on ephemeral ports).
 */
import { expect, test } from "bun:test";
import { freePorts, hasTool } from "../support/processes.ts";
import { fullBacklog, silentPeer } from "../support/stuck-peers.ts";
import { anyperf, dump, interruptAfter, stock, waitListening } from "./harness.ts";

const T = 30_000;
const resultRow = /^\s*\d+\s+\d+\s+\d+\s+([\d.]+)\s+([\d.]+)\s*$/m;
const hasStock = hasTool(["netperf", "-V"], /Netperf version 2/);

test.skipIf(!hasStock)("SIGALRM mid-test: results printed, exit 0, like stock netperf", async () => {
  const port = freePorts(33200, 33204, 1);
  const srv = stock("netserver", ["-D", "-p", String(port)]);
  try {
    await waitListening(port);
    const args = ["-H", "127.0.0.1", "-p", String(port), "-l", "30"];
    const [ours, theirs] = await Promise.all([interruptAfter(anyperf(["netperf", ...args]), 1800, "SIGALRM"), interruptAfter(stock("netperf", args), 1800, "SIGALRM")]);
    for (const f of [theirs, ours]) {
      expect(f.code, dump(f)).toBe(0);
      const m = resultRow.exec(f.stdout);
      expect(m, dump(f)).not.toBeNull();
      expect(Number(m![1])).toBeLessThan(5);
      expect(Number(m![2])).toBeGreaterThan(0);
    }
    expect(ours.stderr).not.toMatch(/Alarm clock/);
  } finally {
    srv.kill();
  }
}, T);

test("a netserver that accepts and never answers: SIGTERM exits 143 at once, like stock", async () => {
  const peer = await silentPeer();
  try {
    const args = ["-H", "127.0.0.1", "-p", `${peer.port}`, "-l", "2"];
    const runs = [interruptAfter(anyperf(["netperf", ...args]), 1500, "SIGTERM")];
    if (hasStock) runs.push(interruptAfter(stock("netperf", args), 1500, "SIGTERM"));
    const [ours, theirs] = await Promise.all(runs);
    if (theirs) expect(theirs.signal ?? theirs.code).toBe(theirs.signal ? "SIGTERM" : 143);
    expect(ours!.code, dump(ours!)).toBe(143);
    expect(ours!.afterSignalMs!).toBeLessThan(1_000);
  } finally {
    await peer.close();
  }
}, T);

const interrupted = [
  { name: "a netserver that accepts and never answers: the first SIGINT ends the run with one line, exit 1", stuck: () => silentPeer(), says: "netperf: interrupted; the netserver at 127.0.0.1 port PORT had not answered" },
  { name: "Ctrl+C while the connect waits on a full backlog: exits at once", stuck: async () => {
      const port = freePorts(33204, 33300, 1);
      return { port, ...(await fullBacklog(port)) };
    }, says: "netperf: interrupted while connecting to 127.0.0.1 port PORT" },
];

for (const c of interrupted) {
  test(c.name, async () => {
    const peer = await c.stuck();
    try {
      const f = await interruptAfter(anyperf(["netperf", "-H", "127.0.0.1", "-p", `${peer.port}`, "-l", "2"]), 1500, "SIGINT");
      expect(f.code, dump(f)).toBe(1);
      expect(f.afterSignalMs!).toBeLessThan(1_000);
      expect(f.stderr.trim().split("\n")).toEqual([c.says.replace("PORT", `${peer.port}`)]);
    } finally {
      await peer.close();
    }
  }, T);
}
