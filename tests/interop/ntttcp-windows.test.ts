import { describe, expect, test } from "bun:test";
import { emulateReceiver, emulateSender } from "./ntttcp-windows-emulator.ts";
import { expectClose, expectOk, linuxTotalBytes, sleep, spawnOurs, windowsTotalBytes } from "./ntttcp-harness.ts";

/**
 * anyperf against an emulation of NTttcp for Windows 5.40 written from the spec (no Windows host here): the token
 * handshake in both roles, and the -ns pairings of docs/protocols/ntttcp-interop.md §4.1/§4.2. Tokens use data port +
 * 100 so every port stays in 28700-28899; the product uses + 1000.
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);
const env = { ANYPERF_NTTTCP_TOKEN_OFFSET: "100" };
const T = 60_000;

describe("Windows sync handshake against the emulation", () => {
  test("our sender → emulated Windows receiver: tokens on port+offset, byte counts agree", async () => {
    let up!: () => void;
    const listening = new Promise<void>((r) => (up = r));
    const rx = emulateReceiver({ host: "127.0.0.1", base: 28701, threads: 2, sync: true, offset: 100, warmupS: 0, runS: 2, cooldownS: 0 }, up);
    await listening;
    const tx = await spawnOurs(words("--windows -s -m 2,*,127.0.0.1 -t 2 -p 28701 -thr 62500"), env).done;
    const r = await rx;
    expectOk(tx);
    expectClose(r.recordedBytes, windowsTotalBytes(tx.stdout), 0.02);
    // Our sender outlasts the receiver (1 s linger), so Windows never sees an early close.
    expect(r.unexpectedDisconnects).toBe(0);
  }, T);

  test("emulated Windows sender → our receiver in Windows sync mode", async () => {
    const ours = spawnOurs(words("--windows -r -m 2,*,127.0.0.1 -t 2 -p 28711"), env);
    await sleep(700);
    const s = await emulateSender({ host: "127.0.0.1", base: 28711, threads: 2, sync: true, offset: 100, warmupS: 0, runS: 2, cooldownS: 1 });
    const rx = await ours.done;
    expectOk(rx);
    expectClose(windowsTotalBytes(rx.stdout), s.recordedBytes, 0.03);
  }, T);

  test("a sync sender without a sync receiver fails with a message naming -ns", async () => {
    let up!: () => void;
    const listening = new Promise<void>((r) => (up = r));
    const rx = emulateReceiver({ host: "127.0.0.1", base: 28721, threads: 1, sync: false, offset: 100, warmupS: 0, runS: 1, cooldownS: 0 }, up);
    await listening;
    const tx = await spawnOurs(words("--windows -s -m 1,*,127.0.0.1 -t 1 -p 28721"), { ANYPERF_NTTTCP_TOKEN_OFFSET: "100" }).done;
    await rx;
    expect(tx.code).not.toBe(0);
    expect(tx.stderr).toContain("-ns");
  }, 30_000);
});

describe("no-sync pairings across the two tools (emulated Windows side)", () => {
  test("docs/protocols/ntttcp-interop.md §4.1 / seed 2: emulated Windows -ns sender (with cool-down) → our Linux -N receiver", async () => {
    const ours = spawnOurs(words("-r127.0.0.1 -m 4,*,127.0.0.1 -N -t 2 -p 28801"));
    await sleep(700);
    const s = await emulateSender({ host: "127.0.0.1", base: 28801, threads: 4, sync: false, offset: 1000, warmupS: 0, runS: 2, cooldownS: 1 });
    const rx = await ours.done;
    expectOk(rx);
    expectClose(linuxTotalBytes(rx.stdout), s.recordedBytes, 0.03);
  }, T);

  test("docs/protocols/ntttcp-interop.md §4.2: our Linux -N sender with one connection per port → emulated Windows -ns receiver", async () => {
    let up!: () => void;
    const listening = new Promise<void>((r) => (up = r));
    const rx = emulateReceiver({ host: "127.0.0.1", base: 28811, threads: 2, sync: false, offset: 1000, warmupS: 0, runS: 2, cooldownS: 0 }, up);
    await listening;
    const tx = await spawnOurs(words("-s127.0.0.1 -m 2,*,127.0.0.1 -N -t 2 -p 28811 -B 4G")).done;
    const r = await rx;
    expectOk(tx);
    expectClose(r.recordedBytes, linuxTotalBytes(tx.stdout), 0.03);
    expect(r.unexpectedDisconnects).toBe(0);
  }, T);
});
