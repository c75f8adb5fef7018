import { afterEach, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { spawnProc, waitFor, type Proc } from "../support/processes.ts";
import { emulateSender } from "../interop/ntttcp-windows-emulator.ts";
import { TOKEN_OFFSET, anyperf, hasStock, ntttcpLinux, serveReady, spawnServe } from "./harness.ts";

/**
 * Server limits under serve: --allow on every server at once, and the ntttcp receiver, which under serve (unlike
 * `ntttcp -r`, one test) serves many senders. Each refusal is one line naming the limit's flag; ntttcp has no way to
 * say no, so the connection is closed.
 */

const BASE = 30831;
const H = "127.0.0.1";
const NTTTCP = ntttcpLinux();
let serve: Proc | undefined;
const socks: Socket[] = [];
afterEach(() => {
  for (const s of socks) s.destroy();
  serve?.kill();
});

async function start(...limits: string[]): Promise<Proc> {
  serve = spawnServe(["-p", "30829", "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", `${BASE}`, "-B", H, ...limits], 60_000);
  await serveReady(serve, 2);
  return serve;
}

/** A no-sync sender's connection from `local` that writes 'A's until destroyed; resolves when it is closed on us. */
function sender(local: string): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ host: H, port: BASE, localAddress: local }, () => {
      const pump = () => {
        while (!s.destroyed && s.write(Buffer.alloc(65536, 0x41)));
        if (!s.destroyed) s.once("drain", pump);
      };
      pump();
    });
    s.on("error", () => {});
    s.on("close", () => resolve());
    socks.push(s);
  });
}

describe("anyperf serve: server limits", () => {
  test("--max-streams 2: a sender's third connection is closed, its test runs on two", async () => {
    const p = await start("--max-streams", "2");
    await emulateSender({ host: H, base: BASE, threads: 3, sync: false, offset: TOKEN_OFFSET, warmupS: 0, runS: 1, cooldownS: 0 });
    await waitFor(() => p.stdout(), /\(no sync, 2 connections\) done/, 10_000);
    expect(p.stdout()).toMatch(/\[ntttcp\] ntttcp: refused 127\.0\.0\.1 port \d+: its test has 2 connections; this server allows 2 \(--max-streams\)/);
  }, 30_000);

  test("--max-tests 1: a second sender host is closed while the first one's test runs", async () => {
    const p = await start("--max-tests", "1");
    void sender("127.0.0.1");
    // The first sender's test exists once its connection is in (a loaded machine may take a while to accept it).
    await Bun.sleep(1000);
    const second = await Promise.race([sender("127.0.0.2").then(() => "closed"), Bun.sleep(5000).then(() => "open")]);
    expect(second).toBe("closed");
    await waitFor(() => p.stdout(), /refused 127\.0\.0\.2 port \d+: 1 tests running; this server allows 1 at once \(--max-tests\)/, 5000);
  }, 30_000);

  test.skipIf(!NTTTCP)("--max-duration 2: a Linux sync sender asking for 5 s is refused in one line", async () => {
    const p = await start("--max-duration", "2");
    const f = await spawnProc([NTTTCP!, `-s${H}`, "-p", `${BASE}`, "-t", "5", "-P", "1", "-n", "1"], 30_000).done;
    expect(f.code).not.toBe(0);
    expect(p.stdout()).toMatch(/refused the test from 127\.0\.0\.1: it asks for 5 s; this server allows 2 s \(--max-duration\)/);
  }, 40_000);

  test.skipIf(!hasStock())("--allow holds for every server at once: each refuses a peer outside it in one line naming --allow", async () => {
    serve = spawnServe(["-p", "30850", "--iperf3", "30851", "--iperf", "30852", "--netserver", "30853", "--ntttcp", "30861", "-B", H, "--allow", "10.0.0.0/8"], 60_000);
    await serveReady(serve, 5);
    const runs = await Promise.all([
      spawnProc(["iperf3", "-c", H, "-p", "30851", "-t", "1"], 20_000).done,
      spawnProc(["iperf", "-c", H, "-p", "30852", "-t", "1"], 20_000).done,
      spawnProc(["netperf", "-H", H, "-p", "30853", "-l", "1"], 20_000).done,
      spawnProc([...anyperf(), "client", H, "-p", "30850", "-t", "1"], 20_000).done,
      emulateSender({ host: H, base: 30861, threads: 1, sync: false, offset: TOKEN_OFFSET, warmupS: 0, runS: 1, cooldownS: 0 }),
    ]);
    expect(runs[0].code).not.toBe(0);
    expect(runs[2].code).not.toBe(0);
    expect(runs[3].code).not.toBe(0);
    for (const who of ["iperf3", "iperf", "netserver", "anyperf", "ntttcp"]) {
      await waitFor(() => serve!.stdout(), new RegExp(`^\\[${who}\\] .*refused 127\\.0\\.0\\.1 port \\d+: not in --allow`, "m"), 5000);
    }
    expect(serve.stdout()).not.toMatch(/test from .* done/);
  }, 60_000);
});
