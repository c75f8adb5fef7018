/**
 * -w/--window: SO_SNDBUF and SO_RCVBUF on every data socket of both ends, what the kernel gave read back with
 * getsockopt (Linux: 2 · min(asked, net.core.*mem_max)), carried to the native server in the control protocol, and
 * swept with --sweep window=... natively and around a dialect client. Ports 17500-17509.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertFree, hasTool, spawnProc, waitBound } from "../support/processes.ts";
import { nativeServers } from "../native/harness.ts";
import { linuxSocketBufferBytes } from "../../src/formulas.ts";
import { Results } from "../../src/report/result.ts";
import { formatBytes } from "../../src/units.ts";
import { HistoryEntry } from "../../src/procedure/history.ts";
import { TestRequest } from "../../src/native/protocol/messages.ts";
import { planOf, requestOf } from "../../src/native/request.ts";
import { parseClientArgs } from "../../src/native/client-cli.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const anyperf = (args: string[], limitMs = 60_000) => spawnProc([process.execPath, MAIN, ...args], limitMs);
const sysctl = (name: string) => Number(readFileSync(`/proc/sys/net/core/${name}`, "utf8").trim());
const linux = process.platform === "linux";
const start = nativeServers();

describe("-w on the native plan", () => {
  test("the control request carries -w only when it is given, and the server's plan sets both buffers from it", () => {
    const withW = requestOf(parseClientArgs(["127.0.0.1", "-w", "256K"]).plan, "forward");
    expect(withW.windowBytes).toBe(256 * 1024);
    expect(planOf(TestRequest.parse(withW)).socket).toEqual({ sendBuffer: 262144, recvBuffer: 262144 });
    // Without -w the request is the protocol-1 request it always was.
    const without = requestOf(parseClientArgs(["127.0.0.1"]).plan, "forward");
    expect("windowBytes" in without).toBe(false);
    expect(planOf(TestRequest.parse(without)).socket).toEqual({});
  });

  test("a bad -w is a one-line error naming the flag", async () => {
    for (const w of ["0", "1G", "lots"]) {
      const r = await anyperf(["loopback", "-t", "0.3", "-w", w, "--no-history"]).done;
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^anyperf: --window/);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });

  test.skipIf(!linux)("loopback -w 64K: getsockopt on the data sockets reads 2 · min(64K, *mem_max), printed and in --json", async () => {
    const r = await anyperf(["loopback", "-t", "1.5", "-P", "2", "-w", "64K", "--json", "--no-history"]).done;
    expect(r.code).toBe(0);
    const doc = Results.parse(JSON.parse(r.stdout));
    expect(doc.socket_buffers).toEqual({
      requested_bytes: 65536,
      send_bytes: linuxSocketBufferBytes(65536, sysctl("wmem_max")),
      receive_bytes: linuxSocketBufferBytes(65536, sysctl("rmem_max")),
    });
    const text = await anyperf(["loopback", "-t", "1.5", "-P", "1", "-w", "32K", "--no-history"]).done;
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`socket buffers: -w 32.0 KiB asked; getsockopt gave SO_SNDBUF ${formatBytes(linuxSocketBufferBytes(32768, sysctl("wmem_max")))}, SO_RCVBUF ${formatBytes(linuxSocketBufferBytes(32768, sysctl("rmem_max")))}`);
    // Without -w nothing is claimed.
    const plain = await anyperf(["loopback", "-t", "0.5", "-P", "1", "--json", "--no-history"]).done;
    expect(Results.parse(JSON.parse(plain.stdout)).socket_buffers).toBeUndefined();
  }, 60_000);

  test.skipIf(!linux)("read as soon as -w is set, so UDP (no TCP_INFO samples) and runs shorter than a sample report it too", async () => {
    for (const args of [["-u", "-b", "10M", "-w", "256K"], ["-w", "256K"], ["--rr", "1,1", "-w", "256K"]]) {
      const r = await anyperf(["loopback", "-t", "0.3", "-P", "1", ...args, "--json", "--no-history"]).done;
      expect(r.code).toBe(0);
      expect(Results.parse(JSON.parse(r.stdout)).socket_buffers).toEqual({
        requested_bytes: 262144,
        send_bytes: linuxSocketBufferBytes(262144, sysctl("wmem_max")),
        receive_bytes: linuxSocketBufferBytes(262144, sysctl("rmem_max")),
      });
    }
  }, 60_000);

  test.skipIf(!linux)("client -w 128K -R: the server sets it too (it travels in the request) and reports what it got", async () => {
    await start(17500);
    const r = await anyperf(["client", "127.0.0.1", "-p", "17500", "-t", "1.5", "-R", "-w", "128K", "--json", "--no-history"]).done;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = Results.parse(JSON.parse(r.stdout));
    const snd = linuxSocketBufferBytes(131072, sysctl("wmem_max")), rcv = linuxSocketBufferBytes(131072, sysctl("rmem_max"));
    // -R: this end receives, the server sends.
    expect(doc.socket_buffers).toEqual({ requested_bytes: 131072, receive_bytes: rcv });
    expect(doc.remote?.socket_buffers).toEqual({ requested_bytes: 131072, send_bytes: snd });
  }, 60_000);
});

describe("sweeping the window", () => {
  test.skipIf(!linux)("loopback --sweep window=32K,256K: one row per window, the best marked, each run's -w in the history", async () => {
    const hist = join(mkdtempSync(join(tmpdir(), "anyperf-window-")), "h.jsonl");
    const r = await anyperf(["loopback", "-t", "0.5", "-P", "1", "--sweep", "window=32K,256K", "--history", hist]).done;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const rows = r.stdout.split("\n").filter((l) => /^[* ]\s+window=/.test(l));
    expect(rows.map((l) => /window=(\S+)/.exec(l)![1])).toEqual(["32K", "256K"]);
    expect(rows.filter((l) => l.startsWith("*"))).toHaveLength(1);
    const h = readFileSync(hist, "utf8").trim().split("\n").map((l) => HistoryEntry.parse(JSON.parse(l)));
    expect(h.map((e) => [e.point.window, e.argv.slice(-2)])).toEqual([["32K", ["-w", "32K"]], ["256K", ["-w", "256K"]]]);
  }, 60_000);

  test.skipIf(!hasTool(["iperf3", "--version"], /iperf 3/))("sweep window=64K,256K -- iperf3 against stock iperf3 -s: -w per point, the table", async () => {
    assertFree(17501);
    const server = spawnProc(["iperf3", "-s", "-p", "17501"], 60_000);
    try {
      await waitBound(17501);
      const hist = join(mkdtempSync(join(tmpdir(), "anyperf-window-")), "h.jsonl");
      const r = await anyperf(["sweep", "window=64K,256K", "--history", hist, "--", "iperf3", "-c", "127.0.0.1", "-p", "17501", "-t", "1"]).done;
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("sweep: medians per point; * best throughput");
      expect(r.stdout.split("\n").filter((l) => /^[* ]\s+window=/.test(l))).toHaveLength(2);
      const h = readFileSync(hist, "utf8").trim().split("\n").map((l) => HistoryEntry.parse(JSON.parse(l)));
      expect(h.map((e) => e.argv.slice(0, 3))).toEqual([["iperf3", "-w", "64K"], ["iperf3", "-w", "256K"]]);
    } finally {
      server.kill();
      await server.done;
    }
  }, 60_000);

  test.skipIf(!hasTool(["iperf", "-v"], /iperf version 2\./))("sweep window=64K,128K -- iperf against stock iperf -s: -w per point, the window iperf reports", async () => {
    assertFree(17503);
    const server = spawnProc(["iperf", "-s", "-p", "17503"], 60_000);
    try {
      await waitBound(17503);
      const r = await anyperf(["sweep", "window=64K,128K", "--no-history", "--", "iperf", "-c", "127.0.0.1", "-p", "17503", "-t", "1"]).done;
      expect(r.code).toBe(0);
      // iperf 2 prints the send buffer the kernel gave: Linux's doubled -w.
      expect(r.stdout).toContain(`TCP window size:  ${linuxSocketBufferBytes(65536, sysctl("wmem_max")) / 1024} KByte (WARNING: requested 64.0 KByte)`);
      expect(r.stdout.split("\n").filter((l) => /^[* ]\s+window=/.test(l))).toHaveLength(2);
    } finally {
      server.kill();
      await server.done;
    }
  }, 60_000);

  test.skipIf(!hasTool(["netperf", "-V"], /Netperf version 2\.7/))("sweep window=64K -- netperf: its test-specific -s and -S, after the user's own", async () => {
    assertFree(17502);
    const server = spawnProc(["netserver", "-D", "-p", "17502"], 60_000);
    try {
      await waitBound(17502);
      const hist = join(mkdtempSync(join(tmpdir(), "anyperf-window-")), "h.jsonl");
      const r = await anyperf(["sweep", "window=64K", "--history", hist, "--", "netperf", "-H", "127.0.0.1", "-p", "17502", "-l", "1", "--", "-m", "16K"]).done;
      expect(r.code).toBe(0);
      // netperf prints the socket sizes it got: Linux's doubled 64K, the receiver's then the sender's.
      const rcv = linuxSocketBufferBytes(65536, sysctl("rmem_max")), snd = linuxSocketBufferBytes(65536, sysctl("wmem_max"));
      expect(r.stdout).toMatch(new RegExp(`^\\s*${rcv}\\s+${snd}\\s+16384\\s+`, "m"));
      const [e] = readFileSync(hist, "utf8").trim().split("\n").map((l) => HistoryEntry.parse(JSON.parse(l)));
      expect(e!.argv.slice(-6)).toEqual(["-m", "16K", "-s", "64K", "-S", "64K"]);
    } finally {
      server.kill();
      await server.done;
    }
  }, 60_000);

  test("ntttcp has no socket-buffer option: window is refused, naming what it can sweep", async () => {
    const r = await anyperf(["sweep", "window=64K", "--", "ntttcp", "-s", "127.0.0.1"]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sweep window: ntttcp has no option for it; sweep streams or length/);
  });
});
