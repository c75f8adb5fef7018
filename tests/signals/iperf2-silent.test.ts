/**
 * Issue 21 item 16 (iperf 2 part): after a timed test against a server that accepts and never reads nor closes,
 * the client's FIN exchange waits up to 10 s for the server's EOF. It must not be deaf to signals meanwhile, and its
 * report covers the time it sent (not the FIN wait). The silent server listens on an ephemeral port.
 */
import { expect, test } from "bun:test";
import { silentPeer } from "../support/stuck-peers.ts";
import { anyperf, dump, interruptAfter } from "./harness.ts";

const line = /\[\s*1\]\s+0\.0000-(\d+\.\d+) sec\s+[\d.]+ [KM]Bytes/;

const cases = [
  { name: "-t 1, SIGINT during the FIN wait: exits at once with the 1 s report", time: "1", signalAtMs: 2_500, exitWithinMs: 1_000, reportEndsBeforeS: 1.5 },
  { name: "-t 10, SIGINT mid-test: reports within about a second", time: "10", signalAtMs: 2_000, exitWithinMs: 2_000, reportEndsBeforeS: 3 },
];

for (const c of cases) {
  test(`iperf -c against a silent server, ${c.name}`, async () => {
    const peer = await silentPeer();
    try {
      const f = await interruptAfter(anyperf(["iperf", "-c", "127.0.0.1", "-p", `${peer.port}`, "-t", c.time]), c.signalAtMs, "SIGINT");
      expect(f.code, dump(f)).toBe(0);
      expect(f.afterSignalMs!, dump(f)).toBeLessThan(c.exitWithinMs);
      const m = line.exec(f.stdout);
      expect(m, dump(f)).not.toBeNull();
      expect(Number(m![1])).toBeLessThan(c.reportEndsBeforeS);
    } finally {
      await peer.close();
    }
  }, 30_000);
}
