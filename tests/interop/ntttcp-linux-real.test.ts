import { describe, expect, test } from "bun:test";
import { freePorts, spawnProc, waitBound } from "../support/processes.ts";
import { ntttcpLinux } from "../serve/harness.ts";
import { spawnOurs } from "./ntttcp-harness.ts";

/**
 * Our ntttcp receiver against the real ntttcp-for-linux 1.4.3 sender (built by ntttcp-linux-build; NTTTCP_LINUX
 * names it, else an `ntttcp` on PATH that is not anyperf's own). Skipped without it.
 */

const REAL = ntttcpLinux();
const words = (s: string) => s.split(/\s+/).filter(Boolean);

describe.skipIf(!REAL)("ntttcp-for-linux 1.4.3 sender -> anyperf ntttcp receiver", () => {
  test("-W 1 -t 2 -C 1: the sender's 'E' at the end of its cycle is a normal end, not an interruption", async () => {
    const port = freePorts(28600, 28690, 2) + 1;
    const rx = spawnOurs(words(`-r127.0.0.1 -P 1 -p ${port} -W 1 -t 2 -C 1`));
    await waitBound(port - 1, "tcp", 15_000);
    const tx = await spawnProc([REAL!, ...words(`-s127.0.0.1 -P 1 -n 1 -p ${port} -W 1 -t 2 -C 1`)], 30_000).done;
    const r = await rx.done;
    expect(tx.code).toBe(0);
    expect(tx.stdout).toContain("INFO: receiver exited from current test");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("sender side was interrupted");
    expect(r.stdout).toContain("INFO: Test cycle finished.");
  }, 60_000);

  test("-H: senders started one right after another each get their test (every second one waited for 'R' forever)", async () => {
    const port = freePorts(28600, 28690, 2) + 1;
    const rx = spawnOurs(words(`-r127.0.0.1 -H -P 2 -p ${port} -t 1`));
    await waitBound(port - 1, "tcp", 15_000);
    const runs = [];
    for (const extra of ["", "-W 1", "-n 2", "-l 2"]) {
      const t0 = Date.now();
      const tx = await spawnProc([REAL!, ...words(`-s127.0.0.1 -P 2 -n 1 -p ${port} -t 1 ${extra}`)], 20_000).done;
      runs.push({ extra, code: tx.code, ended: Date.now() - t0 < 15_000 });
    }
    rx.kill();
    await rx.done;
    expect(runs).toEqual(["", "-W 1", "-n 2", "-l 2"].map((extra) => ({ extra, code: 0, ended: true })));
  }, 120_000);
});
