/**
 * The iperf 2 UDP server reports through the engine's Test, as its TCP server does: while a stock `iperf -c -u`
 * runs, `anyperf iperf -s -u --http` lists the test in /status `running[]` with its bytes growing and in /metrics;
 * once it is over, the Test's bytes are the datagrams the server's own line counts, and that line is the one the
 * stock client prints as its Server Report. Before, the UDP flows were counted outside any Test and never showed.
 * Ports 18700-18799 (free ones picked at run time).
 */
import { expect, test } from "bun:test";
import { StatusDocument } from "../../src/status/schema.ts";
import { freePorts } from "../support/processes.ts";
import { hasStockIperf, oursMain, reportLines, sleep, stock, waitListening } from "./iperf2-harness.ts";

const PORT = freePorts(18700, 18800, 2);
const HTTP = PORT + 1;
const base = `http://127.0.0.1:${HTTP}`;
/** The final line's datagram figures: "0.012 ms 3/25512 (0.012%)". */
const COUNTS = /([\d.]+) ms\s+(\d+)\/\s*(\d+) \(/;

async function status(): Promise<StatusDocument> {
  return StatusDocument.parse(await (await fetch(`${base}/status`)).json());
}

test.skipIf(!hasStockIperf())("iperf -s -u --http: a stock UDP client's test runs in /status and /metrics, and ends on the server's own figures", async () => {
  const srv = oursMain(["-s", "-u", "-p", String(PORT), "--http", `127.0.0.1:${HTTP}`]);
  try {
    // A loaded host (8 helpers on 2 cores) has taken over 8 s to start the server from source.
    await waitListening(PORT, "udp", 30_000);
    await waitListening(HTTP, "tcp", 30_000);
    const client = stock(["-c", "127.0.0.1", "-u", "-b", "100M", "-t", "3", "-p", String(PORT)]);
    const seen: number[] = [];
    let metrics = "";
    const end = Date.now() + 8000;
    while (Date.now() < end && seen.length < 3) {
      const t = (await status()).running.find((r) => r.mode === "iperf" && r.role === "server");
      if (t?.phase === "measuring" && t.bytes > 0) {
        seen.push(t.bytes);
        metrics ||= await (await fetch(`${base}/metrics`)).text();
      }
      await sleep(500);
    }
    const c = await client.done;
    expect(c.code, c.out).toBe(0);
    expect(seen.length, srv.text()).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)!).toBeGreaterThan(seen[0]!);
    expect(metrics).toMatch(/^anyperf_bytes_total\{[^}]*dialect="iperf"[^}]*role="server"[^}]*\} [1-9]\d*$/m);

    // The server's final line (the whole test) is what the stock client prints as the Server Report.
    await sleep(300);
    const finalLine = reportLines(srv.text()).find((l) => /\] 0\.0000-/.test(l.line) && COUNTS.test(l.line));
    expect(finalLine, srv.text()).toBeDefined();
    const server = COUNTS.exec(finalLine!.line)!;
    const report = COUNTS.exec(c.out.split("Server Report:")[1] ?? "");
    expect(report, c.out).not.toBeNull();
    expect([report![2], report![3]]).toEqual([server[2], server[3]]);

    // The Test ended on the same count: every datagram that arrived (FIN included) of 1470 bytes.
    const doc = await status();
    expect(doc.running.filter((r) => r.mode === "iperf")).toEqual([]);
    const [lost, total] = [Number(server[2]), Number(server[3])];
    expect(doc.test?.bytes).toBe((total - lost) * 1470);
  } finally {
    srv.kill();
    await srv.done;
  }
}, 60_000);
