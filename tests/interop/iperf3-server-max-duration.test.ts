/**
 * --server-max-duration on our server, as 3.20 added it: a test whose -t plus -O exceeds it, or that has no time
 * bound (-n, -k), is refused with i_errno 37 at PARAM_EXCHANGE, and every client ends at once on it. Ports 36500-36549.
 */
import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { hasStockIperf3, hasTrixieIperf3, ours, stock, trixie, waitListening, type Finished, type Proc } from "./iperf3-harness.ts";

const T = 90_000;
let nextPort = 36500;
const port = () => {
  const p = freePorts(nextPort, 36550, 1);
  nextPort = p + 1;
  return p;
};

async function against(client: (a: string[]) => Proc, clientArgs: string[]): Promise<Finished & { ms: number }> {
  const p = port();
  const srv = ours(["-s", "-p", String(p), "--server-max-duration", "3"]);
  try {
    await waitListening(p);
    const t0 = performance.now();
    const f = await client(["-c", "127.0.0.1", "-p", String(p), ...clientArgs]).done;
    return { ...f, ms: performance.now() - t0 };
  } finally {
    srv.kill();
    await srv.done;
  }
}

const REFUSED = "client's requested duration exceeds the server's maximum permitted limit";

describe("iperf3 --server-max-duration on our server", () => {
  test("our client: -t 2 -O 1 runs; -t 3 -O 1, -t 10 and -n 1M are refused at once in 3.20's words", async () => {
    expect((await against(ours, ["-t", "2", "-O", "1"])).code).toBe(0);
    for (const args of [["-t", "3", "-O", "1"], ["-t", "10"], ["-n", "1M"]]) {
      const f = await against(ours, args);
      expect(f.code).not.toBe(0);
      expect(f.stderr).toContain(`iperf3: error - ${REFUSED}`);
      expect(f.ms).toBeLessThan(8000);
    }
  }, T);

  test.skipIf(!hasStockIperf3())("a stock 3.12 client asking for more ends at once (it knows no text for i_errno 37)", async () => {
    const f = await against(stock, ["-t", "10"]);
    expect(f.code).not.toBe(0);
    expect(f.stdout + f.stderr).toContain("iperf3: error - int_errno=37");
    expect(f.ms).toBeLessThan(8000);
  }, T);

  test.skipIf(!hasTrixieIperf3())("a 3.18 client asking for more ends at once", async () => {
    const f = await against(trixie, ["-t", "10"]);
    expect(f.code).not.toBe(0);
    expect(f.ms).toBeLessThan(8000);
  }, T);
});
