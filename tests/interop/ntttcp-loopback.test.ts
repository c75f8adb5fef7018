import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { xmlLeaves } from "../../compat/ntttcp/xml-tree.ts";
import { expectClose, expectOk, linuxRate, linuxTotalBytes, pair, windowsRate, windowsTotalBytes } from "./ntttcp-harness.ts";
import { freePorts } from "../support/processes.ts";

/**
 * anyperf ↔ anyperf over loopback in every ntttcp mode: Linux sync and -N, TCP and UDP, multi-client, the Windows
 * dialect with and without its token handshake (tokens moved to data port + 100 to stay in this file's port range),
 * the cross-dialect seed of the issue, and the XML/JSON files read back. Ports 28400-28699.
 * Senders are paced (-B / -thr) and the sides' rates are compared: each side times its own window, and on a busy
 * machine a timer that fires late lengthens one window, which moves byte counts apart but not rates.
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);
const T = 90_000;

describe("ntttcp-for-linux dialect, both sides anyperf", () => {
  test("sync TCP, 2 ports: the handshake runs and both sides count the same bytes", async () => {
    const { rx, tx } = await pair(words("-r127.0.0.1 -P 2 -p 28401 -t 2"), words("-s127.0.0.1 -P 2 -n 1 -p 28401 -t 2 -B 1G"));
    expectOk(rx, tx);
    expect(rx.stdout).toContain("INFO: 3 threads created");
    expect(rx.stdout).toContain("INFO: Network activity progressing...");
    expect(tx.stdout).toContain("INFO: 2 connections tested");
    expectClose(linuxRate(rx.stdout), linuxRate(tx.stdout), 0.03);
  }, T);

  test("no-sync TCP with the default 4 threads per port (8 connections on 2 ports)", async () => {
    const { rx, tx } = await pair(words("-r127.0.0.1 -N -P 2 -p 28411 -t 2"), words("-s127.0.0.1 -N -P 2 -p 28411 -t 2 -B 1G"));
    expectOk(rx, tx);
    expect(tx.stdout).toContain("Starting sender activity (no sync) ...");
    expect(tx.stdout).toContain("INFO: 8 connections tested");
    expectClose(linuxRate(rx.stdout), linuxRate(tx.stdout), 0.03);
  }, T);

  test("sync UDP and no-sync UDP at a paced rate: no datagram lost on loopback", async () => {
    for (const [sync, base] of [["", 28421], ["-N", 28431]] as const) {
      const { rx, tx } = await pair(words(`-r127.0.0.1 -u ${sync} -P 2 -p ${base} -t 2`), words(`-s127.0.0.1 -u ${sync} -P 2 -n 1 -p ${base} -t 2 -B 100M`));
      expectOk(rx, tx);
      expect(rx.stdout).not.toContain("retrans segs");
      expectClose(linuxRate(rx.stdout), linuxRate(tx.stdout), 0.03);
    }
  }, T);

  test("a -N sender whose data connect is refused: one line naming the port, exit 24 like a refused sync port", async () => {
    const { spawnOurs } = await import("./ntttcp-harness.ts");
    const port = freePorts(28690, 28700, 1);
    const r = await spawnOurs(words(`-s127.0.0.1 -N -P 1 -p ${port} -t 1`)).done;
    expect(r.stderr).toBe(`anyperf: connection to 127.0.0.1:${port} refused: start the server there first, or check host and port\n`);
    expect(r.code).toBe(24);
  }, T);

  test("warm-up and cool-down: cycle W+t+C negotiated, 'E' confirmed by the receiver", async () => {
    const { rx, tx } = await pair(words("-r127.0.0.1 -P 1 -p 28441 -t 2"), words("-s127.0.0.1 -P 1 -n 1 -p 28441 -W 1 -t 2 -C 1"));
    expectOk(rx, tx);
    expect(tx.stdout).toContain("Test cycle time negotiated is: 4 seconds");
    expect(tx.stdout).toContain("Test warmup completed.");
    expect(tx.stdout).toContain("Test cooldown is in progress...");
    expect(tx.stdout).toContain("receiver exited from current test");
    expect(rx.stdout).toContain("Test cycle time negotiated is: 4 seconds");
  }, T);

  test("multi-client: -M receiver waits for the -L sender", async () => {
    const { spawnOurs, sleep } = await import("./ntttcp-harness.ts");
    const r = spawnOurs(words("-r127.0.0.1 -M -P 1 -p 28451 -t 2"));
    await sleep(700);
    const first = spawnOurs(words("-s127.0.0.1 -P 1 -n 1 -p 28451 -t 2 -B 500M"));
    await sleep(1000);
    const last = spawnOurs(words("-s127.0.0.1 -L -P 1 -n 1 -p 28451 -t 2 -B 500M"));
    const [rx, a, b] = await Promise.all([r.done, first.done, last.done]);
    expectOk(rx, a, b);
    expect(a.stdout).toContain("waiting for the last client to join the test");
    expectClose(linuxRate(rx.stdout), linuxRate(a.stdout) + linuxRate(b.stdout), 0.03);
  }, T);

  test("-x, -j and -O files are written and read back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ntttcp-"));
    const { rx, tx } = await pair(words("-r127.0.0.1 -P 1 -p 28461 -t 2 -V -x r.xml -j r.json -O r.log"), words("-s127.0.0.1 -P 1 -n 1 -p 28461 -t 2 -V -x s.xml -j s.json"), { cwd: dir });
    expectOk(rx, tx);
    const sent = linuxTotalBytes(tx.stdout);
    const leaves = xmlLeaves(readFileSync(join(dir, "s.xml"), "utf8"));
    expect(Math.round(Number(leaves.find((l) => l.path === "ntttcps/total_bytes")!.text) * 1e6)).toBe(sent);
    expect(leaves.find((l) => l.path === "ntttcps/conns_tested")!.text).toBe("1");
    // The sender's mean tcpi_rtt from TCP_INFO: a real figure on Linux, the same in the console and the XML.
    const rtt = leaves.find((l) => l.path === "ntttcps/tcp_average_rtt")!.text;
    expect(Number(rtt)).toBeGreaterThan(0);
    expect(tx.stdout).toContain(`tcpi rtt\t\t:${rtt} us`);
    const json = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(Math.round(Number(json.ntttcpr.totalBytes.value) * 1e6)).toBe(linuxTotalBytes(rx.stdout));
    expect(json.ntttcpr.threads).toHaveLength(1);
    const log = readFileSync(join(dir, "r.log"), "utf8");
    expect(log).toContain("INFO: #####  Totals:  #####");
    expect(log).not.toContain("Real-time throughput");
  }, T);
});

describe("Windows dialect, both sides anyperf", () => {
  test("-ns TCP: one connection per thread, tables in MiB", async () => {
    const { rx, tx } = await pair(words("-r -m 2,*,127.0.0.1 -ns -t 2 -p 28501"), words("-s -m 2,*,127.0.0.1 -ns -t 2 -p 28501 -thr 62500"));
    expectOk(rx, tx);
    expect(tx.stdout).toContain("Thread  Time(s) Throughput(KB/s) Avg B / Compl");
    expectClose(windowsRate(rx.stdout), windowsRate(tx.stdout), 0.03);
  }, T);

  test("-l 1k: Avg B / Compl never exceeds -l, on the receiver either (a read can hand over several buffers)", async () => {
    const { rx, tx } = await pair(words("-r -m 2,*,127.0.0.1 -ns -t 2 -l 1k -p 28531"), words("-s -m 2,*,127.0.0.1 -ns -t 2 -l 1k -p 28531"));
    expectOk(rx, tx);
    for (const out of [rx.stdout, tx.stdout]) {
      const rows = out.split("\r\n").filter((l) => /^\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+$/.test(l));
      expect(rows).toHaveLength(2);
      for (const r of rows) expect(Number(r.trim().split(/\s+/)[3])).toBeLessThanOrEqual(1024);
    }
  }, T);

  test("count mode: a receiver's -n counts its reads (as 5.40's), so it ends after -n reads of a longer sender", async () => {
    const p = freePorts(28540, 28560, 1);
    const { rx, tx } = await pair(words(`--windows -r -m 1,*,127.0.0.1 -ns -n 1000 -p ${p}`), words(`--windows -s -m 1,*,127.0.0.1 -ns -n 4000 -p ${p}`));
    // The receiver stops after its 1000 reads (it waited for the sender's close before, 4000 buffers later) and
    // closes with data unread; the sender meets the reset as 5.40's does, as a normal end.
    expectOk(rx, tx);
    expect(rx.stdout).not.toContain("Unexpected disconnect");
    expect(windowsTotalBytes(rx.stdout)).toBeLessThanOrEqual(1000 * 65536);
    expect(windowsTotalBytes(tx.stdout)).toBeLessThan(4000 * 65536);
    const avg = Number(rx.stdout.split("\r\n").find((l) => /^\s+0\s+[\d.]+\s+[\d.]+\s+[\d.]+$/.test(l))!.trim().split(/\s+/)[3]);
    expect(avg).toBeLessThanOrEqual(65536);
  }, T);

  test("token handshake (offset emulated at +100) and -xml appended", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ntttcp-"));
    const env = { ANYPERF_NTTTCP_TOKEN_OFFSET: "100" };
    for (let run = 0; run < 2; run++) {
      const { rx, tx } = await pair(words("-r -m 2,*,127.0.0.1 -t 2 -p 28511 -xml r.xml"), words("-s -m 2,*,127.0.0.1 -t 2 -p 28511 -wu 1 -cd 1 -v"), { env, cwd: dir });
      expectOk(rx, tx);
      expect(rx.stdout).not.toContain("Bytes(MEG)");
      expect(tx.stdout).toContain("Network activity progressing...");
      // -v: 5.40's flag dump after the banner, and its progress lines stamped with the time.
      expect(tx.stdout).toContain("\r\nbuffers_length: 65536\r\nnum_buffers_to_send: 9223372036854775807\r\n");
      expect(tx.stdout).toMatch(/\r\n\d+\/\d+\/\d+ \d+:\d+:\d+ Network activity progressing\.\.\.\r\n\d+\/\d+\/\d+ \d+:\d+:\d+ test start\r\n/);
      expect(rx.stdout).not.toContain("test start");
    }
    const xml = readFileSync(join(dir, "r.xml"), "utf8");
    expect(xml.match(/<ntttcpr /g)).toHaveLength(2);
    const first = xmlLeaves(xml.slice(0, xml.indexOf("</ntttcpr>") + 10));
    expect(first.find((l) => l.path === "ntttcpr/parameters/port")!.text).toBe("28513");
    expect(first.find((l) => l.path === "ntttcpr/parameters/sync_port")!.text).toBe("False");
    expect(first.filter((l) => l.path === "ntttcpr/thread/realtime")).toHaveLength(2);
  }, T);

  test("issue seed 2: Windows -ns sender → Linux -N receiver", async () => {
    const { rx, tx } = await pair(words("-r -m 4,*,127.0.0.1 -N -t 2 -p 28521"), words("-s -m 4,*,127.0.0.1 -ns -t 2 -p 28521 -thr 31250"));
    expectOk(rx, tx);
    expectClose(linuxRate(rx.stdout), windowsRate(tx.stdout), 0.03);
  }, T);
});
