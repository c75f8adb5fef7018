import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnProc, type Proc } from "../support/processes.ts";
import { emulateSender } from "../interop/ntttcp-windows-emulator.ts";
import { TOKEN_OFFSET, figures, hasStock, ntttcpLinux, serveReady, spawnServe } from "./harness.ts";

/**
 * iperf 2 and ntttcp on one port (their common default, 5001; here 30701): each connection reaches the server of the
 * client that made it, by what it sends first (iperf 2's header, ntttcp's 'A's), also when it stays silent until its sync
 * contact (ntttcp-for-linux sync: 'R' on PORT-1; Windows NTttcp sync: tokens on PORT+offset).
 */

const PORT = 30701;
const H = "127.0.0.1";
const NTTTCP = ntttcpLinux();

let serve: Proc;
beforeAll(async () => {
  serve = spawnServe(["-p", "30790", "--iperf3", "off", "--netserver", "off", "--iperf", `${PORT}`, "--ntttcp", `${PORT}`, "-B", H], 600_000);
  await serveReady(serve, 3);
});
afterAll(() => serve?.kill());

/** serve's report of ntttcp tests: bytes of each "total bytes" line, in order. */
const ntttcpTotals = () => figures(serve.stdout(), /\[ntttcp\] .*total bytes\t:(\d+)/);
/** An emulated Windows sender on the shared port: serve names its start mode, and counts what it sent. */
async function windowsSender(sync: boolean, mode: string): Promise<void> {
  const before = ntttcpTotals().length;
  const s = await emulateSender({ host: H, base: PORT, threads: 2, sync, offset: TOKEN_OFFSET, warmupS: 0, runS: 2, cooldownS: 0 });
  for (let i = 0; i < 100 && ntttcpTotals().length === before; i++) await Bun.sleep(50);
  expect(serve.stdout()).toMatch(new RegExp(`\\[ntttcp\\] .*test from \\S+ \\(${mode}, 2 connections\\) done`));
  const got = ntttcpTotals()[before]!;
  // The emulator times 2 s of writes; serve counts from the first byte to the senders' close, so also what the
  // emulator wrote outside its own clock: its first burst, before the clock starts, went 11 % over the timed bytes
  // on a clean-clone run. Never more than it wrote in all.
  expect(got).toBeGreaterThan(s.recordedBytes * 0.9);
  expect(got).toBeLessThanOrEqual(s.writtenBytes);
}

describe("one port for iperf 2 and ntttcp", () => {
  test("Windows NTttcp sync sender (silent data connections until its tokens): served as ntttcp, bytes agree", () => windowsSender(true, "windows sync"), 30_000);

  test("Windows NTttcp -ns sender: served as ntttcp, bytes agree", () => windowsSender(false, "no sync"), 30_000);

  test.skipIf(!hasStock())("iperf TCP, iperf UDP and an ntttcp-for-linux sync sender on the same port at the same time", async () => {
    const before = ntttcpTotals().length;
    const runs = [
      spawnProc(["iperf", "-c", H, "-p", `${PORT}`, "-t", "3"], 30_000),
      spawnProc(["iperf", "-u", "-c", H, "-p", `${PORT}`, "-t", "3", "-b", "5M"], 30_000),
      ...(NTTTCP ? [spawnProc([NTTTCP, `-s${H}`, "-p", `${PORT}`, "-t", "3", "-P", "1", "-n", "2"], 30_000)] : []),
    ];
    const [tcp, udp, nt] = await Promise.all(runs.map((r) => r.done));
    for (const f of [tcp, udp, nt]) if (f) expect(f.code).toBe(0);
    expect(figures(tcp!.stdout, /sec\s+[\d.]+ \w?Bytes\s+([\d.]+) \w?bits\/sec/)[0]).toBeGreaterThan(0);
    expect(udp!.stdout).toContain("Server Report:");
    if (nt) {
      await Bun.sleep(300);
      expect(ntttcpTotals().length).toBe(before + 1);
      expect(serve.stdout()).toMatch(/\[ntttcp\] .*\(linux sync, 2 connections\) done/);
    }
    // No connection went to the wrong server: iperf 2 reported no dropped connection, ntttcp no stray test.
    expect(serve.stdout()).not.toContain("dropped connection");
  }, 40_000);

  test("Ctrl+C mid-test: serve prints what the running ntttcp test measured, then exits 130", async () => {
    const before = ntttcpTotals().length;
    const sender = emulateSender({ host: H, base: PORT, threads: 2, sync: false, offset: TOKEN_OFFSET, warmupS: 0, runS: 4, cooldownS: 0 });
    await Bun.sleep(1500);
    serve.kill("SIGINT");
    const f = await serve.done;
    await sender;
    expect(f.code).toBe(130);
    expect(ntttcpTotals().length).toBe(before + 1);
    expect(ntttcpTotals()[before]).toBeGreaterThan(0);
  }, 30_000);
});
