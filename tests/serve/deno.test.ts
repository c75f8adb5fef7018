import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { spawnProc, waitFor } from "../support/processes.ts";
import { hasStock } from "./harness.ts";

/**
 * `anyperf serve` from source under Deno: no fd hand-off there (no bun:ffi), so the servers that hand accepted
 * sockets to Workers say they are off and why; the native server and netserver still serve.
 */

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

test.skipIf(!existsSync(DENO) || !hasStock())("under Deno: serve runs the native server and netserver, and says which servers are off", async () => {
  const serve = spawnProc([DENO, "run", "--allow-all", `${ROOT}main.ts`, "serve", "-p", "30470", "--iperf3", "30471", "--iperf", "30472", "--ntttcp", "30481", "--netserver", "30473", "-B", "127.0.0.1"], 90_000, { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" });
  try {
    await waitFor(() => serve.stdout() + serve.stderr(), /netserver on 127\.0\.0\.1:30473/, 60_000);
    expect(serve.stdout()).toContain("anyperf on 127.0.0.1:30470");
    for (const who of ["iperf3", "iperf", "ntttcp"]) expect(serve.stderr()).toContain(`${who} off: it hands sockets to data Workers through libc; run the Linux (glibc) build under Bun`);
    const netperf = await spawnProc(["netperf", "-H", "127.0.0.1", "-p", "30473", "-l", "1"], 30_000).done;
    expect(netperf.code).toBe(0);
  } finally {
    serve.kill("SIGINT");
  }
  expect((await serve.done).code).toBe(130);
}, 120_000);
