import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeClassicStreamResponse } from "../../interop/netperf/classic-stream.ts";
import { freePorts } from "../support/processes.ts";
import { finish, hasStockNetperf, oursNetperf, oursNetserver, oursServeNetserver, stockNetperf, stockNetserver, waitListening, withoutStockTimerRace, type Proc } from "./netperf-harness.ts";

/**
 * Issue 21 items 6 and 10, with stock netperf/netserver 2.7.0 on the other side: TCP_CC (its own classic DO_TCP_CC
 * messages) on both sides and through `anyperf serve --netserver`, TCP_SENDFILE as our client, and TRANSPORT_MSS
 * of every TCP test (TCP_CRR's read from its first connection). Ports picked free in 17000-17099.
 */

const available = hasStockNetperf();
const LIMIT_MS = 40_000;
const BASE = available ? freePorts(17000, 17100, 4) : 0;
const [STOCK, OURS, SERVE] = [BASE, BASE + 1, BASE + 2];

let stockServer: Proc | undefined;
let ourServer: Proc | undefined;
let serve: Proc | undefined;

beforeAll(async () => {
  if (!available) return;
  stockServer = stockNetserver(["-D", "-p", String(STOCK)]);
  ourServer = oursNetserver(["-D", "-p", String(OURS)]);
  serve = oursServeNetserver(SERVE);
  await Promise.all([waitListening(STOCK, 10_000), waitListening(OURS, 10_000), waitListening(SERVE, 15_000)]);
});

afterAll(async () => {
  for (const s of [stockServer, ourServer, serve]) s?.kill();
  await Promise.all([stockServer?.done, ourServer?.done, serve?.done]);
});

const run = (who: typeof stockNetperf, port: number, args: string[]) => finish(who(["-H", "127.0.0.1", "-p", String(port), ...args]), LIMIT_MS);

/** The output with every number replaced, so two runs of one test compare line for line. */
const shape = (text: string) => withoutStockTimerRace(text).replace(/-?\d+(\.\d+)?/g, "N");

/** TCP_CC's figures: local sizes, request and response sizes, elapsed, rate; then the remote sizes. */
const CC_ROW = /\n(\d+) +(\d+) +(\d+) +(\d+) +([\d.]+) +([\d.]+) +\n(\d+) +(\d+)\n$/;

function ccFigures(out: string) {
  const m = CC_ROW.exec(out);
  if (!m) throw new Error(`no TCP_CC row in:\n${out}`);
  const n = m.slice(1).map(Number);
  return { sizes: [n[0], n[1], n[2], n[3], n[6], n[7]], elapsed: n[4]!, rate: n[5]! };
}

describe.skipIf(!available)("netperf -t TCP_CC (connect/close)", () => {
  // One second each: at ~17k connections a second, a 2 s run closes more connections to one data port than the
  // ephemeral range holds in TIME_WAIT ("data socket connect failed: Cannot assign requested address" in a CI run).
  test("anyperf netperf against stock netserver prints what stock netperf prints", async () => {
    const args = ["-t", "TCP_CC", "-l", "1"];
    const stock = await run(stockNetperf, STOCK, args);
    const ours = await run(oursNetperf, STOCK, args);
    expect(stock.code).toBe(0);
    expect(ours.err).toBe("");
    expect(ours.code).toBe(0);
    expect(ours.out.split("\n")[0]).toBe(stock.out.split("\n")[0]);
    expect(shape(ours.out)).toBe(shape(stock.out));
    const [s, o] = [ccFigures(stock.out), ccFigures(ours.out)];
    expect(o.sizes).toEqual(s.sizes);
    // Ours ends when the Worker has stopped, which a loaded host delays by tens of milliseconds.
    expect(Math.abs(o.elapsed - 1)).toBeLessThan(0.25);
    // Both loops open and close loopback connections as fast as the host lets them (thousands a second).
    expect(o.rate).toBeGreaterThan(s.rate / 10);
  });

  test("-v 2 -r 5,7 and -P 0 -v 0: the same layout as stock's", async () => {
    for (const extra of [["-v", "2", "--", "-r", "5,7"], ["-P", "0", "-v", "0"]]) {
      const args = ["-t", "TCP_CC", "-l", "1", ...extra];
      const [stock, ours] = [await run(stockNetperf, STOCK, args), await run(oursNetperf, STOCK, args)];
      expect(ours.code).toBe(0);
      expect(shape(ours.out)).toBe(shape(stock.out));
    }
  });

  for (const [name, port] of [["anyperf netserver", () => OURS], ["anyperf serve --netserver", () => SERVE]] as const) {
    test(`stock netperf against ${name}: the test runs and reports as against stock netserver`, async () => {
      const args = ["-t", "TCP_CC", "-l", "1"];
      const ref = await run(stockNetperf, STOCK, args);
      const r = await run(stockNetperf, port(), args);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(shape(r.out)).toBe(shape(ref.out));
      const f = ccFigures(r.out);
      expect(f.sizes).toEqual(ccFigures(ref.out).sizes);
      expect(f.rate).toBeGreaterThan(100);
    });
  }

  test("anyperf netperf against anyperf netserver, by count (-l -500)", async () => {
    const r = await run(oursNetperf, OURS, ["-t", "TCP_CC", "-l", "-500"]);
    expect(r.code).toBe(0);
    expect(ccFigures(r.out).rate).toBeGreaterThan(0);
  });
});

describe.skipIf(!available)("netperf -t TCP_SENDFILE as anyperf's client", () => {
  const STREAM_ROW = /\n *(\d+) +(\d+) +(\d+) +([\d.]+) +([\d.]+) +\n$/;

  test("against stock netserver: stock's title and table, a throughput of the same order", async () => {
    const args = ["-t", "TCP_SENDFILE", "-l", "2"];
    const stock = await run(stockNetperf, STOCK, args);
    const ours = await run(oursNetperf, STOCK, args);
    expect(ours.err).toBe("");
    expect(ours.code).toBe(0);
    expect(ours.out.split("\n")[0]).toBe(stock.out.split("\n")[0]);
    expect(shape(ours.out)).toBe(shape(stock.out));
    const [s, o] = [STREAM_ROW.exec(stock.out)!, STREAM_ROW.exec(ours.out)!];
    // Receive socket, send socket, send size.
    expect(o.slice(1, 4)).toEqual(s.slice(1, 4));
    expect(Number(o[5])).toBeGreaterThan(Number(s[5]) / 10);
  });

  test("-F FILE: its bytes are sent; a file smaller than the ring fails as stock does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "anyperf-sendfile-"));
    const small = join(dir, "small");
    writeFileSync(small, "x".repeat(100));
    const args = ["-F", small, "-t", "TCP_SENDFILE", "-l", "1"];
    const [stock, ours] = [await run(stockNetperf, STOCK, args), await run(oursNetperf, STOCK, args)];
    expect(stock.code).not.toBe(0);
    expect(ours.code).toBe(stock.code);
    expect(ours.err).toBe(stock.err);
    // -m 1024 with the default 16384-byte send buffer: a ring of 17 sends.
    const big = join(dir, "big");
    writeFileSync(big, new Uint8Array(17 * 1024).fill(0x61));
    const ok = await run(oursNetperf, STOCK, ["-F", big, "-t", "TCP_SENDFILE", "-l", "1", "--", "-m", "1024"]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(STREAM_ROW);
  });

  test("against anyperf netserver", async () => {
    const r = await run(oursNetperf, OURS, ["-t", "TCP_SENDFILE", "-l", "1"]);
    expect(r.code).toBe(0);
    expect(Number(STREAM_ROW.exec(r.out)?.[5])).toBeGreaterThan(100);
  });
});

describe.skipIf(!available)("TRANSPORT_MSS (-k) of every TCP test, as stock reports it", () => {
  for (const t of ["TCP_CRR", "TCP_RR", "TCP_STREAM", "TCP_MAERTS"]) {
    test(t, async () => {
      const args = ["-l", "1", "-P", "0", "-t", t, "--", "-k", "TRANSPORT_MSS"];
      const stock = await run(stockNetperf, STOCK, args);
      const ours = await run(oursNetperf, STOCK, args);
      expect(ours.code).toBe(0);
      const mss = (out: string) => Number(/TRANSPORT_MSS=(-?\d+)/.exec(out)?.[1]);
      expect(mss(ours.out)).toBeGreaterThan(0);
      expect(mss(ours.out)).toBe(mss(stock.out));
    });
  }
});

describe.skipIf(!available)("netperf -t UUID (the one other test name this stock build accepts)", () => {
  test("prints the test's UUID with no newline once connected, as stock does; -- -u names it", async () => {
    for (const who of [stockNetperf, oursNetperf]) {
      const r = await run(who, OURS, ["-t", "uuid"]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect((await run(who, OURS, ["-t", "UUID", "--", "-u", "abc"])).out).toBe("abc");
    }
  });

  test("no netserver: the control connection's failure, exit 255, as stock", async () => {
    const closed = freePorts(17050, 17100, 1);
    const [stock, ours] = [await run(stockNetperf, closed, ["-t", "UUID"]), await run(oursNetperf, closed, ["-t", "UUID"])];
    expect(stock.code).toBe(255);
    expect(ours.code).toBe(255);
    expect(ours.out).toBe(stock.out);
  });
});

describe.skipIf(!available)("Ctrl+C in a connect test: stock netserver answers only when its padded timer (-l + 4 s) runs out", () => {
  for (const t of ["TCP_CRR", "TCP_CC"]) {
    test(`${t} -l 10, SIGINT at 3 s: this side's figures within about 2 s, exit 0`, async () => {
      const p = oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-t", t, "-l", "10", "-P", "0"]);
      await Bun.sleep(3_000);
      const at = performance.now();
      p.interrupt();
      const r = await finish(p, 20_000);
      expect(performance.now() - at, r.err).toBeLessThan(3_500);
      expect(r.code, r.err).toBe(0);
      const row = /^16384 +131072 +1 +1 +([\d.]+) +([\d.]+) +\n16384 +131072\n$/.exec(r.out);
      expect(row, r.out + r.err).not.toBeNull();
      expect(Number(row![1])).toBeLessThan(4);
      expect(Number(row![2])).toBeGreaterThan(0);
    });
  }
});

describe("a netserver that names a data port nobody listens on", () => {
  test("TCP_SENDFILE: one line naming the refusal, exit 1, no stack trace", async () => {
    const [control, closed] = [freePorts(17060, 17100, 1), freePorts(17070, 17100, 1)];
    // Answers the DO_TCP_STREAM with the closed port, as a netserver whose data listener died would.
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: control,
      socket: { data: (s) => void s.write(encodeClassicStreamResponse({ recvBufSize: 131072, sendBufSize: 16384, dataPort: closed })) },
    });
    try {
      const r = await run(oursNetperf, control, ["-t", "TCP_SENDFILE", "-l", "1", "-P", "0"]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^anyperf: .*127\.0\.0\.1:\d+ refused[^\n]*\n$/);
      expect(r.err).not.toContain("    at ");
    } finally {
      server.stop(true);
    }
  });
});

describe.skipIf(!available)("-- -h and -- -o ?, as stock netperf 2.7.0 prints them", () => {
  test("sockets_usage for TCP_MSS, TCP_CC and TCP_SENDFILE, omni_usage for omni and the migrated tests, the selector list: the same bytes on stdout, exit 1", async () => {
    const argvs = [...["TCP_MSS", "TCP_CC", "TCP_SENDFILE", "omni", "TCP_STREAM", "TCP_RR", "UUID"].map((name) => ["-t", name, "--", "-h"]), ["-t", "omni", "--", "-o", "?"], ["--", "-k", "?"]];
    for (const argv of argvs) {
      const [stock, ours] = await Promise.all([finish(stockNetperf(argv), LIMIT_MS), finish(oursNetperf(argv), LIMIT_MS)]);
      expect({ argv, code: ours.code, out: ours.out, err: ours.err }).toEqual({ argv, code: stock.code, out: stock.out, err: stock.err });
    }
  }, 120_000);
});
