/**
 * `anyperf iperf -c -u -P 2 -R` against a stock `iperf -s -u`: two reverse streams, each from its own socket, as the
 * stock client runs them. Before, ours ran one; and two requests sent at one instant reach a stock server as one test
 * (it takes one peer at a time on its port), so a stream whose server stream has not begun asks again.
 */
import { expect, test } from "bun:test";
import { hasStockIperf, ours, stock, waitListening } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";

const PORT = freePorts(27940, 27949, 1);

test.skipIf(!hasStockIperf())("-u -P 2 -R against stock 2.1.8: two reverse streams and their sum", async () => {
  const srv = stock(["-s", "-u", "-p", String(PORT)]);
  try {
    await waitListening(PORT, "udp", 30_000);
    const c = await ours(["-c", "127.0.0.1", "-u", "-p", String(PORT), "-P", "2", "-R", "-t", "2"]).done;
    expect(c.code).toBe(0);
    const finals = c.out.split("\n").filter((l) => /^\[ \*[12]\] 0\.0+-\d\.\d+ sec .* ms \d+\/\d+ \(/.test(l));
    expect(finals, c.out).toHaveLength(2);
    for (const l of finals) expect(Number(/ \d+\/(\d+) \(/.exec(l)![1])).toBeGreaterThan(100);
    expect(c.out).toMatch(/\[SUM\] 0\.0+-\d\.\d+ sec/);
    await Bun.sleep(300);
    expect(srv.text().match(/\(reverse\)/g)).toHaveLength(2);
  } finally {
    srv.kill();
    await srv.done;
  }
}, 60_000);
