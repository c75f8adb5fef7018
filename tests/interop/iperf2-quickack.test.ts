/**
 * --tcp-quickack: a stock client flags it in its header (forward and --full-duplex) and the stock server then sets
 * TCP_QUICKACK before each read and notes "(qack)"; the client does the same for what it reads itself (-R, and the
 * server's connections back with -d and -r). The
 * kernel drops the option by itself, so a read-back proves nothing: what counts is the setsockopt calls, seen by
 * strace on our process.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { hasStrace, traceCalls } from "../support/syscall-trace.ts";
import { ours, oursMain, type Proc, stockPeer, waitFor } from "./iperf2-harness.ts";

const dir = mkdtempSync(join(tmpdir(), "anyperf-qack-"));
const quickAcks = (lines: string[]) => lines.filter((l) => /setsockopt\(\d+, SOL_TCP, TCP_QUICKACK, \[1\], 4\) = 0/.test(l)).length;
/** -b 200m with 128 KiB writes: about 190 writes a second, so at least that many reads. */
const ARGS = ["-t", "2", "-b", "200m"];

async function traced(proc: Proc, ready: RegExp, run: () => Promise<void>): Promise<string[]> {
  await waitFor(proc, ready, 30_000);
  const t = await traceCalls(proc.pid, "setsockopt", join(dir, `trace-${proc.pid}`));
  try {
    await run();
  } finally {
    await t.stop();
  }
  return t.lines();
}

for (const peer of iperf2Peers().slice(0, 2)) {
  describe(`stock ${peer.label} client --tcp-quickack against anyperf iperf -s`, () => {
    test.skipIf(peer.version === undefined || !hasStrace())("our server notes (qack) and sets TCP_QUICKACK before its reads; without the flag it never does", async () => {
      const port = freePorts(28130, 28150, 1);
      const srv = oursMain(["-s", "-p", String(port)]);
      try {
        let out = "";
        const lines = await traced(srv, /Server listening/, async () => {
          const c = await stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), ...ARGS, "--tcp-quickack"]).done;
          expect(c.code, c.out).toBe(0);
          out = c.out;
        });
        expect(out).toContain("(qack)");
        await waitFor(srv, /\(qack\)[\s\S]*Mbits\/sec/, 5000);
        expect(quickAcks(lines)).toBeGreaterThan(150);
        const plain = await traced(srv, /Mbits\/sec/, async () => {
          const c = await stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), ...ARGS]).done;
          expect(c.code, c.out).toBe(0);
        });
        expect(quickAcks(plain)).toBe(0);
      } finally {
        srv.kill();
        await srv.done;
      }
    }, 60_000);
  });
}

describe("anyperf iperf -c --tcp-quickack against stock iperf -s", () => {
  const peer = iperf2Peers()[0]!;
  test.skipIf(peer.version === undefined || !hasStrace())("forward: the stock server notes (qack); -R: our client sets TCP_QUICKACK before its reads", async () => {
    const port = freePorts(28130, 28150, 1);
    const srv = stockPeer(peer)(["-s", "-p", String(port), "-e"]);
    try {
      await waitFor(srv, /Server listening/, 10_000);
      const fwd = await ours(["-c", "127.0.0.1", "-p", String(port), "-t", "1", "--tcp-quickack"]).done;
      expect(fwd.code, fwd.out).toBe(0);
      expect(fwd.out).toMatch(/connected with 127\.0\.0\.1 port \d+ \(qack\)/);
      await waitFor(srv, /\(qack\)/, 5000);
      const client = ours(["-c", "127.0.0.1", "-p", String(port), "-t", "3", "-b", "200m", "-R", "--tcp-quickack"]);
      // Our client is traced from its first line on: the reads come after the connection line.
      const lines = await traced(client, /Client connecting/, async () => {
        const f = await client.done;
        expect(f.code, f.out).toBe(0);
        expect(f.out).toMatch(/\(reverse\).*\(qack\)/);
      });
      expect(quickAcks(lines)).toBeGreaterThan(150);
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 60_000);
  test.skipIf(peer.version === undefined || !hasStrace())("-d and -r: our connect-back reader notes (qack) and sets TCP_QUICKACK before its reads, as the stock client's does", async () => {
    const [port, back] = [freePorts(28130, 28150, 1), freePorts(28150, 28170, 1)];
    const srv = stockPeer(peer)(["-s", "-p", String(port)]);
    try {
      await waitFor(srv, /Server listening/, 10_000);
      for (const mode of ["-d", "-r"]) {
        const client = ours(["-c", "127.0.0.1", "-p", String(port), "-L", String(back), ...ARGS, mode, "--tcp-quickack", "-e"]);
        const lines = await traced(client, /Client connecting/, async () => {
          const f = await client.done;
          expect(f.code, f.out).toBe(0);
          expect(f.out, mode).toMatch(new RegExp(`\\[  2\\] local 127\\.0\\.0\\.1%lo port ${back} connected with 127\\.0\\.0\\.1 port \\d+ \\(sock=\\d+\\) \\(qack\\) on `));
        });
        expect(quickAcks(lines), mode).toBeGreaterThan(150);
      }
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 60_000);
  test("--tcp-quickack with -u or -C is refused in one line", async () => {
    for (const extra of [["-u"], ["-C"]]) {
      const f = await ours(["-c", "127.0.0.1", "-p", "1", "--tcp-quickack", ...extra]).done;
      expect(f.code).toBe(1);
      expect(f.out.trim().split("\n")).toHaveLength(1);
      expect(f.out).toContain("--tcp-quickack with");
    }
  });
});
