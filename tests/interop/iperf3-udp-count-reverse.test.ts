/**
 * Issue 21 item 3: stock `iperf3 -c -u -R -n N` (or `-k N`) against `anyperf iperf3 -s`. The client ends when it has
 * *received* N and only then sends TEST_END; 3.12's server sends until that TEST_END. Ours stopped after exactly N,
 * so one lost datagram left the stock client waiting for ever. Loss is provoked: a 1 Gbit/s stream into an 8 KiB
 * receive buffer (-w 8K) drops most datagrams on loopback. Ports 33500-33599.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hasStockIperf3, json, ours, stock, waitListening, type Proc } from "./iperf3-harness.ts";
import { freePorts } from "../support/processes.ts";

// Free ports picked at run time: the range is also the kernel's ephemeral one.
const PORT = freePorts(33500, 33550, 1);

describe.skipIf(!hasStockIperf3())("stock iperf3 -u -R with a byte or block count, against our server, when datagrams are lost", () => {
  let server: Proc;
  beforeAll(async () => {
    server = ours(["-s", "-p", `${PORT}`], 120_000);
    await waitListening(PORT);
  });
  afterAll(async () => {
    server.kill();
    await server.done;
  });

  for (const count of [["-n", "5M"], ["-k", "1K"]]) {
    test(`${count.join(" ")}: the client gets its count and ends; our server sent on until TEST_END`, async () => {
      const started = performance.now();
      const f = await stock(["-c", "127.0.0.1", "-p", `${PORT}`, "-u", "-b", "1G", ...count, "-R", "-w", "8K", "-J"], 20_000).done;
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(f.code).toBe(0);
      const sum = json(f).end.sum!;
      // The scenario really lost datagrams (else it proves nothing), and the client still reached its count.
      expect(sum.lost_packets).toBeGreaterThan(0);
      // 3.12 stops on its count of what it read, but its JSON sums are cut from its interval stats a moment
      // earlier: under load the last datagram or two are not in them yet (1022 and 1023 of 1024 seen; 5 MiB less
      // one 32 KiB datagram), so allow two.
      if (count[0] === "-n") {
        const { blksize } = (json(f).start as { test_start: { blksize: number } }).test_start;
        expect(sum.bytes!).toBeGreaterThanOrEqual(5 * 1024 * 1024 - 2 * blksize);
      } else expect(sum.packets! - sum.lost_packets!).toBeGreaterThanOrEqual(1019);
    }, 30_000);
  }
});

describe.skipIf(!hasStockIperf3())("our client -u -R -k against the stock server, when datagrams are lost", () => {
  test("-k 1K: the client ends once it has received 1024 datagrams, as 3.12 counts them (lost ones do not count)", async () => {
    const port = freePorts(33550, 33600, 1);
    const server = stock(["-s", "-p", `${port}`, "-1"], 30_000);
    try {
      await waitListening(port);
      const f = await ours(["-c", "127.0.0.1", "-p", `${port}`, "-u", "-b", "1G", "-k", "1K", "-R", "-w", "8K", "-J"], 20_000).done;
      expect(f.code).toBe(0);
      const sum = json(f).end.sum!;
      expect(sum.lost_packets).toBeGreaterThan(0);
      expect(sum.packets! - sum.lost_packets!).toBeGreaterThanOrEqual(1024);
    } finally {
      server.kill();
      await server.done;
    }
  }, 30_000);
});
