import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { spawnProc, waitFor } from "../support/processes.ts";
import { hasStock, ntttcpLinux } from "./harness.ts";

/**
 * `anyperf serve` from source under Deno: no bun:ffi there, so sockets a server accepted stay on the main thread
 * (local hand-off, src/net/hand-off.ts) and every server runs; stock iperf3 (TCP and UDP: each UDP stream a view of
 * the port's one socket), netperf, iperf and ntttcp-for-linux (when NTTTCP_LINUX names it) are served.
 */

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

test.skipIf(!existsSync(DENO) || !hasStock())("under Deno: serve runs every server; stock iperf3 TCP and UDP, netperf, iperf and ntttcp-for-linux are served", async () => {
  const serve = spawnProc([DENO, "run", "--allow-all", `${ROOT}main.ts`, "serve", "-p", "30470", "--iperf3", "30471", "--iperf", "30472", "--ntttcp", "30481", "--netserver", "30473", "-B", "127.0.0.1"], 90_000, { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" });
  try {
    await waitFor(() => serve.stdout() + serve.stderr(), /ntttcp on 127\.0\.0\.1:30481/, 60_000);
    for (const who of ["anyperf on 127.0.0.1:30470", "iperf3 on 127.0.0.1:30471", "iperf on 127.0.0.1:30472", "netserver on 127.0.0.1:30473"]) expect(serve.stdout()).toContain(who);
    expect(serve.stderr()).toBe("");
    for (const args of [["-t", "1"], ["-u", "-b", "50M", "-t", "1"]]) {
      const r = await spawnProc(["iperf3", "-c", "127.0.0.1", "-p", "30471", "-J", ...args], 30_000).done;
      const doc = JSON.parse(r.stdout) as { error?: string; end: { sum_received: { bytes: number } } };
      expect(doc.error).toBeUndefined();
      expect(doc.end.sum_received.bytes).toBeGreaterThan(0);
    }
    const netperf = await spawnProc(["netperf", "-H", "127.0.0.1", "-p", "30473", "-l", "1"], 30_000).done;
    expect(netperf.code).toBe(0);
    const iperf = await spawnProc(["iperf", "-c", "127.0.0.1", "-p", "30472", "-t", "1", "-y", "C"], 30_000).done;
    expect(iperf.code).toBe(0);
    await waitFor(serve.stdout, /\[iperf\] .*sec/, 10_000);
    const ntttcp = ntttcpLinux();
    if (ntttcp) {
      expect((await spawnProc([ntttcp, "-s127.0.0.1", "-p", "30481", "-P", "1", "-t", "1", "-N"], 30_000).done).code).toBe(0);
      await waitFor(serve.stdout, /\[ntttcp\] .*total bytes\t:\d+/, 10_000);
    }
  } finally {
    serve.kill("SIGINT");
  }
  expect((await serve.done).code).toBe(130);
}, 120_000);
