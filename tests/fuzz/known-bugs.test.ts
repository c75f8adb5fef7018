/**
 * Minimal inputs for the bugs the fuzz targets found (described in known-bugs.ts), each marked `test.failing`:
 * CI stays green while the bug is there, and this file goes red the day a fix lands, so the test and the matching
 * KNOWN predicate get deleted together. Each test states the behaviour the module should have.
 */
import { expect, test } from "bun:test";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

// KNOWN.iperf3PidfileBadPath. Port 36998: nothing listens there, the client is refused at once.
test.failing("iperf3 -I in a missing directory: one line naming -I, no internal error", async () => {
  const p = Bun.spawn([process.execPath, MAIN, "iperf3", "-c", "127.0.0.1", "-p", "36998", "-I", "/nonexistent/dir/x"], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  expect(code).not.toBe(0);
  expect(err).not.toContain("internal error");
  expect(err).toContain("-I");
});
