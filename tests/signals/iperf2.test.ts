import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { iperf2Peers } from "../support/stock-peers.ts";
import { waitListening as waitBound } from "../interop/iperf2-harness.ts";
import { anyperf, dump, interruptAfter, scratch, sleep, stock, tempLeftovers, waitFor, waitListening } from "./harness.ts";

/**
 * `anyperf iperf` under Ctrl+C and SIGTERM, against stock iperf 2.1.8, which takes either signal as the end of the
 * run: the client and the server print the final line of what they measured and exit 0. With -o the file is
 * started anew and holds the whole report. Ports 20300-20399.
 */

const T = 30_000;
const finalLine = /\[\s*\d+\] 0\.0000-(\d+\.\d{4}) sec\s+[\d.]+ [KMG]Bytes\s+[\d.]+ [KMG]bits\/sec\n/;

test("client -o: SIGINT ends the test with its final line in the file, exit 0", async () => {
  const dir = scratch();
  const file = join(dir, "client.txt");
  const srv = stock("iperf", ["-s", "-p", "20301"]);
  try {
    await waitListening(20301);
    const f = await interruptAfter(anyperf(["iperf", "-c", "127.0.0.1", "-p", "20301", "-t", "30", "-i", "1", "-o", file]), 1800, "SIGINT");
    expect(f.code, dump(f)).toBe(0);
    expect(f.stdout).toBe(`Output from stdout and stderr will be redirected to file ${file}\n`);
    const text = readFileSync(file, "utf8");
    expect(text).toContain("Client connecting to 127.0.0.1, TCP port 20301");
    expect(Number(finalLine.exec(text)![1])).toBeLessThan(5);
    expect(tempLeftovers(dir)).toEqual([]);
  } finally {
    srv.kill();
  }
}, T);

test("server -o: SIGTERM mid-test writes the test's final line, exit 0", async () => {
  const dir = scratch();
  const file = join(dir, "server.txt");
  writeFileSync(file, "an earlier run\n");
  const srv = anyperf(["iperf", "-s", "-p", "20302", "-o", file]);
  await waitListening(20302);
  const cl = stock("iperf", ["-c", "127.0.0.1", "-p", "20302", "-t", "30"]);
  try {
    await sleep(1500);
    const f = await interruptAfter(srv, 0, "SIGTERM");
    expect(f.code, dump(f)).toBe(0);
    const text = readFileSync(file, "utf8");
    // iperf 2 opens -o with "w": the old content is gone.
    expect(text.startsWith("------------------------------------------------------------\nServer listening on TCP port 20302\n")).toBe(true);
    expect(Number(finalLine.exec(text)?.[1]), text).toBeLessThan(5);
    expect(tempLeftovers(dir)).toEqual([]);
    await cl.done;
  } finally {
    srv.kill();
    cl.kill();
  }
}, T);

/**
 * A reverse test (-R, TCP and UDP) is the server's sending: stock 2.1.8 and 2.2.1 clients end at once on Ctrl+C,
 * with the final line of what arrived until then. Ours waited for the server's end, the whole -t.
 */
const reverseFinal = /\[ \*1\] 0\.0000-(\d+\.\d{4}) sec +[\d.]+ [KMG]?Bytes +[\d.]+ [KMG]?bits\/sec/;
for (const peer of iperf2Peers().filter((p) => p.version !== undefined)) {
  for (const [mode, extra] of [["TCP", []], ["UDP -e", ["-u", "-e"]]] as const) {
    test(`client -R ${mode} against ${peer.label}: SIGINT ends the test at once with its final line`, async () => {
      const port = mode === "TCP" ? 20303 : 20304;
      const srv = stock(peer.command, ["-s", "-p", String(port), ...(mode === "TCP" ? [] : ["-u"])]);
      try {
        await waitBound(port, mode === "TCP" ? "tcp" : "udp", 10_000);
        const cl = anyperf(["iperf", "-c", "127.0.0.1", "-p", String(port), "-R", "-t", "20", "-i", "1", ...extra]);
        await waitFor(cl, (out) => out.includes("0.0000-1.0000 sec"));
        const f = await interruptAfter(cl, 300, "SIGINT");
        expect(f.code, dump(f)).toBe(0);
        expect(f.afterSignalMs!, dump(f)).toBeLessThan(3_000);
        expect(Number(reverseFinal.exec(f.stdout)?.[1]), dump(f)).toBeLessThan(5);
      } finally {
        srv.kill();
      }
    }, T);
  }
}
