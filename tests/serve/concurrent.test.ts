import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnProc, type Finished, type Proc } from "../support/processes.ts";
import { anyperf, figures, hasStock, ntttcpLinux, serveReady, spawnServe } from "./harness.ts";

/**
 * issue 16's "done when": one `anyperf serve`, and every kind of client against it at the same time (stock iperf3,
 * iperf 2 TCP and UDP, netperf TCP_RR and UDP_STREAM, ntttcp-for-linux in sync mode); each prints the figures it
 * prints against its own server. iperf 2 and ntttcp share one port, as they do by default.
 */

const P = { native: 30300, iperf3: 30201, shared: 30501, netserver: 30865 };
const NTTTCP = ntttcpLinux();
/** anyperf client's modes, all at once with the stock clients. */
const NATIVE: Record<string, string[]> = {
  nativeTcp: [],
  nativeUdp: ["-u", "-b", "50M"],
  nativeRr: ["--rr", "1,1"],
  nativeCrr: ["--crr"],
  nativeReverse: ["-R"],
  nativeBidir: ["--bidir"],
};
const H = "127.0.0.1";

let serve: Proc;
beforeAll(async () => {
  if (!hasStock()) return;
  serve = spawnServe(["-p", `${P.native}`, "--iperf3", `${P.iperf3}`, "--iperf", `${P.shared}`, "--ntttcp", `${P.shared}`, "--netserver", `${P.netserver}`, "-B", H], 600_000);
  await serveReady(serve, 5);
});
afterAll(() => serve?.kill());

const ok = (name: string, f: Finished) => {
  if (f.code !== 0) throw new Error(`${name} exited ${f.code}:\n${f.stdout}\n${f.stderr}`);
};

describe.skipIf(!hasStock())("anyperf serve: every client at once", () => {
  test("iperf3, iperf TCP and UDP, netperf TCP_RR and UDP_STREAM, ntttcp-for-linux (sync) and anyperf client (TCP, UDP, --rr, --crr, -R, --bidir) all succeed together", async () => {
    const runs: Record<string, Proc> = {
      iperf3: spawnProc(["iperf3", "-c", H, "-p", `${P.iperf3}`, "-t", "4", "-J"], 30_000),
      iperfTcp: spawnProc(["iperf", "-c", H, "-p", `${P.shared}`, "-t", "4"], 30_000),
      iperfUdp: spawnProc(["iperf", "-u", "-c", H, "-p", `${P.shared}`, "-t", "4", "-b", "10M"], 30_000),
      tcpRr: spawnProc(["netperf", "-H", H, "-p", `${P.netserver}`, "-t", "TCP_RR", "-l", "4"], 30_000),
      udpStream: spawnProc(["netperf", "-H", H, "-p", `${P.netserver}`, "-t", "UDP_STREAM", "-l", "4", "--", "-m", "1400"], 30_000),
      ...(NTTTCP ? { ntttcp: spawnProc([NTTTCP, `-s${H}`, "-p", `${P.shared}`, "-t", "4", "-P", "2", "-n", "1"], 40_000) } : {}),
      ...Object.fromEntries(
        Object.entries(NATIVE).map(([k, args]) => [k, spawnProc([...anyperf(), "client", H, "-p", `${P.native}`, "-t", "3", "--json", ...args], 40_000)]),
      ),
    };
    const done = Object.fromEntries(await Promise.all(Object.entries(runs).map(async ([k, p]) => [k, await p.done] as const)));
    for (const [k, f] of Object.entries(done)) ok(k, f);

    // iperf3 -J: both ends' sums, as against a stock server.
    const j = JSON.parse(done.iperf3!.stdout) as { end: { sum_sent: { bytes: number }; sum_received: { bytes: number; bits_per_second: number } } };
    expect(j.end.sum_received.bits_per_second).toBeGreaterThan(0);
    expect(j.end.sum_received.bytes).toBeLessThanOrEqual(j.end.sum_sent.bytes);
    // iperf 2 TCP: the whole-test line; UDP: the server's report with its datagram counts.
    expect(figures(done.iperfTcp!.stdout, /0\.0+-\s*\d+\.\d+ sec\s+[\d.]+ \w?Bytes\s+([\d.]+) \w?bits\/sec/)[0]).toBeGreaterThan(0);
    expect(done.iperfUdp!.stdout).toContain("Server Report:");
    const udp = /(\d+)\/(\d+) \(/.exec(done.iperfUdp!.stdout.split("Server Report:")[1] ?? "");
    expect(Number(udp?.[2])).toBeGreaterThan(0);
    // netperf: the result line's transaction rate, and the receiving side's throughput of UDP_STREAM.
    const rr = done.tcpRr!.stdout.trim().split("\n").find((l) => /^\d+\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+/.test(l));
    expect(Number(rr?.trim().split(/\s+/)[5])).toBeGreaterThan(0);
    const udpLines = done.udpStream!.stdout.trim().split("\n").filter((l) => /^\d+\s/.test(l.trim()));
    expect(udpLines.length).toBe(2);
    expect(Number(udpLines[1]!.trim().split(/\s+/).at(-1))).toBeGreaterThan(0);

    // anyperf client: both ends' figures over one window, every mode served beside the stock clients.
    for (const k of Object.keys(NATIVE)) {
      const r = JSON.parse(done[k]!.stdout) as { summary: { bytes: number; transactions?: number }; remote?: unknown };
      expect(r.summary.bytes).toBeGreaterThan(0);
      expect(r.remote).toBeDefined();
    }
    expect(JSON.parse(done.nativeRr!.stdout).summary.transactions).toBeGreaterThan(0);

    const log = serve.stdout();
    expect(log).toMatch(/^\[iperf3\] .*receiver/m);
    expect(log).toMatch(/^\[iperf\] .*Gbits\/sec|^\[iperf\] .*Mbits\/sec/m);
    if (NTTTCP) {
      // The sender's bytes and what serve counted in the same cycle agree (data in flight at the cut aside).
      const sent = figures(done.ntttcp!.stdout, /total bytes\t:(\d+)/)[0]!;
      const got = figures(log, /\[ntttcp\] .*total bytes\t:(\d+)/)[0]!;
      expect(got).toBeGreaterThan(sent * 0.8);
      expect(got).toBeLessThanOrEqual(sent * 1.01);
    }
  }, 90_000);

  test("iperf -r and -d, iperf3 UDP, -R and --bidir, netperf TCP_STREAM, TCP_MAERTS, TCP_CRR and UDP_RR, one after another on the same serve", async () => {
    const run = async (cmd: string[]) => {
      const f = await spawnProc(cmd, 30_000).done;
      ok(cmd.join(" "), f);
      return f.stdout;
    };
    // -r / -d: the server connects back to the client's -L port (outside ntttcp's data ports).
    const tradeoff = await run(["iperf", "-c", H, "-p", `${P.shared}`, "-t", "1", "-r", "-L", "30560"]);
    expect(figures(tradeoff, /sec\s+[\d.]+ \w?Bytes\s+([\d.]+) \w?bits\/sec/).filter((x) => x > 0).length).toBeGreaterThanOrEqual(2);
    const dual = await run(["iperf", "-c", H, "-p", `${P.shared}`, "-t", "1", "-d", "-L", "30561"]);
    expect(figures(dual, /sec\s+[\d.]+ \w?Bytes\s+([\d.]+) \w?bits\/sec/).filter((x) => x > 0).length).toBeGreaterThanOrEqual(2);
    for (const extra of [["-u", "-b", "20M"], ["-R"], ["--bidir"]]) {
      const j = JSON.parse(await run(["iperf3", "-c", H, "-p", `${P.iperf3}`, "-t", "1", "-J", ...extra])) as { end: { sum_received?: { bytes: number }; sum?: { bytes: number } } };
      expect((j.end.sum_received ?? j.end.sum)!.bytes).toBeGreaterThan(0);
    }
    for (const t of ["TCP_STREAM", "TCP_MAERTS", "TCP_CRR", "UDP_RR"]) {
      const out = await run(["netperf", "-H", H, "-p", `${P.netserver}`, "-t", t, "-l", "1"]);
      const line = out.trim().split("\n").filter((l) => /^\d+\s/.test(l.trim()))[0]!;
      expect(Number(line.trim().split(/\s+/).at(-1))).toBeGreaterThan(0);
    }
  }, 60_000);

  test.skipIf(!NTTTCP)("ntttcp-for-linux: test after test, sync then -N, on the port iperf 2 shares", async () => {
    for (const extra of [[], ["-N"]]) {
      const f = await spawnProc([NTTTCP!, `-s${H}`, "-p", `${P.shared}`, "-t", "2", "-P", "2", "-n", "1", ...extra], 30_000).done;
      ok(`ntttcp ${extra.join(" ")}`, f);
    }
    await Bun.sleep(500);
    expect(serve.stdout()).toMatch(/\[ntttcp\] .*test from \S+ \(linux sync, 2 connections\) done/);
    expect(serve.stdout()).toMatch(/\[ntttcp\] .*test from \S+ \(no sync, 2 connections\) done/);
  }, 60_000);

  test("Ctrl+C ends serve: every server stops, exit 130", async () => {
    serve.kill("SIGINT");
    const f = await serve.done;
    expect(f.code).toBe(130);
  }, 20_000);
});
