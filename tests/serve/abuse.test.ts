import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { spawnProc, type Proc } from "../support/processes.ts";
import { hasStock, ntttcpLinux, serveReady, spawnServe } from "./harness.ts";

/**
 * The shared port under abuse: hundreds of connections that send nothing (held, waiting for a sync contact that
 * never comes) or garbage (routed to iperf 2, which drops them) must not keep real iperf 2 and ntttcp clients out.
 */

const PORT = 30151;
const H = "127.0.0.1";
const NTTTCP = ntttcpLinux();

let serve: Proc;
const socks: Socket[] = [];
beforeAll(async () => {
  serve = spawnServe(["-p", "30140", "--iperf3", "off", "--netserver", "off", "--iperf", `${PORT}`, "--ntttcp", `${PORT}`, "-B", H], 600_000);
  await serveReady(serve, 3);
});
afterAll(() => {
  for (const s of socks) s.destroy();
  serve?.kill();
});

const open = (send?: Uint8Array) =>
  new Promise<void>((resolve) => {
    const s = connect({ host: H, port: PORT }, () => {
      if (send) s.write(send);
      resolve();
    });
    s.on("error", () => resolve());
    socks.push(s);
  });

describe.skipIf(!hasStock())("anyperf serve: the port iperf 2 and ntttcp share, under abuse", () => {
  test("300 silent and 300 garbage connections, and real iperf and ntttcp tests still run", async () => {
    await Promise.all(Array.from({ length: 300 }, () => open()));
    await Promise.all(Array.from({ length: 300 }, () => open(new Uint8Array(64).fill(0xff))));
    const iperf = spawnProc(["iperf", "-c", H, "-p", `${PORT}`, "-t", "2"], 30_000);
    const nt = NTTTCP ? spawnProc([NTTTCP, `-s${H}`, "-p", `${PORT}`, "-t", "2", "-P", "1", "-n", "2"], 30_000) : undefined;
    const [a, b] = await Promise.all([iperf.done, nt?.done]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/sec\s+[\d.]+ \w?Bytes\s+[\d.]+ \w?bits\/sec/);
    if (b) {
      expect(b.code).toBe(0);
      for (let i = 0; i < 50 && !/\(linux sync, 2 connections\) done/.test(serve.stdout()); i++) await Bun.sleep(100);
      expect(serve.stdout()).toMatch(/\[ntttcp\] .*\(linux sync, 2 connections\) done/);
    }
  }, 60_000);

  test("the silent connections are closed once the hold ends", async () => {
    const closed = () => socks.filter((s) => s.closed || s.readyState === "closed").length;
    for (let i = 0; i < 150 && closed() < socks.length; i++) await Bun.sleep(100);
    expect(closed()).toBe(socks.length);
  }, 30_000);
});
