/**
 * A stream whose peer's data and FIN are all there before the Worker has reported it open (stock `iperf -c -n 10M`
 * on loopback, `--connect-only`) ended before its "opened" reached the main thread: the server printed "stream 0
 * ended before it was set up" and no report (5 of 15 runs on a loaded host), and a client's -d connect-back died with
 * a stack trace. Such a stream was set up and ran: its report is printed like any other.
 */
import { expect, test } from "bun:test";
import { csv, hasStockIperf, oursMain, stock, waitListening } from "./iperf2-harness.ts";
import { freePorts } from "../support/processes.ts";

const PORT = freePorts(27950, 27990, 1);
const RUNS = 12;

test.skipIf(!hasStockIperf())("stock -n 10M and --connect-only against anyperf iperf -s: every test is reported, none 'ended before it was set up'", async () => {
  const srv = oursMain(["-s", "-p", String(PORT), "-y", "C"]);
  try {
    await waitListening(PORT, "tcp", 30_000);
    for (let i = 0; i < RUNS; i++) expect((await stock(["-c", "127.0.0.1", "-p", String(PORT), "-n", "10M"]).done).code).toBe(0);
    expect((await stock(["-c", "127.0.0.1", "-p", String(PORT), "--connect-only"]).done).code).toBe(0);
    await Bun.sleep(500);
    expect(srv.text()).not.toContain("before it was set up");
    // Each -n 10M test's final line carries its 10 MiB and the 24-byte header; stock reads nothing more from it.
    const tenMeg = csv(srv.text()).filter((l) => l.bytes >= 10 * 1024 * 1024);
    expect(tenMeg, srv.text()).toHaveLength(RUNS);
  } finally {
    srv.kill();
    await srv.done;
  }
}, 120_000);
