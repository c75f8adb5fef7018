/**
 * Issue 21 item 8, side by side with stock iperf3 3.12: -C on both sides (the data sockets' congestion control, as
 * `ss` and the -J document show it, and stock's error for an unknown one), -A n/m, -T, --sctp, the UDP "local"
 * address and "Setting UDP block size" line, the UDP pacer's first second, and -O interval labels.
 * Ports 35400-35499.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { freePorts } from "../support/processes.ts";
import { hasStockIperf3, json, ours, stock, waitListening, type Finished, type Proc } from "./iperf3-harness.ts";

const HAVE = hasStockIperf3();
const T = 60_000;
let nextPort = 35400;
/** The next port in 35400-35499 that no socket holds now (the range is also the kernel's ephemeral one). */
const port = () => {
  const p = freePorts(nextPort, 35500, 1);
  nextPort = p + 1;
  return p;
};

/** The algorithms this kernel offers besides its default, so -C changes something visible. */
function otherCongestion(): string | undefined {
  try {
    const def = readFileSync("/proc/sys/net/ipv4/tcp_congestion_control", "latin1").trim();
    const all = readFileSync("/proc/sys/net/ipv4/tcp_available_congestion_control", "latin1").trim().split(/\s+/);
    return all.find((a) => a !== def);
  } catch {
    return undefined;
  }
}
const ALT = otherCongestion();

async function run(server: (a: string[]) => Proc, client: (a: string[]) => Proc, clientArgs: string[], serverArgs: string[] = []): Promise<{ client: Finished; server: Proc }> {
  const p = port();
  const srv = server(["-s", "-p", String(p), ...serverArgs]);
  try {
    await waitListening(p);
    const c = await client(["-c", "127.0.0.1", "-p", String(p), ...clientArgs]).done;
    return { client: c, server: srv };
  } finally {
    srv.kill();
    await srv.done;
  }
}

/** The interval and summary labels ("0.00-1.00", "(omitted)") of a text run, figures dropped. */
function labels(out: string): string[] {
  return out.split("\n").filter((l) => /^\[ *\d+\]\s+\d/.test(l)).map((l) => {
    const m = /\]\s+(\d+\.\d+-\d+\.\d+)\s+sec.*?(\(omitted\)|sender|receiver)?\s*$/.exec(l)!;
    return `${m[1]} ${m[2] ?? ""}`.trim();
  });
}

describe.skipIf(!HAVE)("iperf3 item 8 against stock 3.12", () => {
  test.skipIf(!ALT)("-C ALGO: both ends of the data connection use it (our client → stock server, stock client → our server)", async () => {
    for (const [srv, cli] of [[stock, ours], [ours, stock]] as const) {
      const r = await run(srv, cli, ["-t", "1", "-C", ALT!, "-J"]);
      const end = json(r.client).end as unknown as Record<string, string>;
      expect([end.sender_tcp_congestion, end.receiver_tcp_congestion]).toEqual([ALT, ALT]);
    }
  }, T);

  test("-C with an unknown algorithm fails as stock does, both roles", async () => {
    const want = "iperf3: error - unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host";
    const ref = await run(stock, stock, ["-t", "1", "-C", "nosuch"]);
    expect(ref.client.stderr).toContain(want);
    const mine = await run(stock, ours, ["-t", "1", "-C", "nosuch"]);
    expect(mine.client.code).not.toBe(0);
    expect(mine.client.stderr).toContain(want);
    const theirs = await run(ours, stock, ["-t", "1", "-C", "nosuch"]);
    expect(theirs.client.code).not.toBe(0);
    expect(theirs.client.stderr).toContain(want);
  }, T);

  test("-A n/m is accepted as stock accepts it; -A with no number is refused", async () => {
    for (const a of ["0/1", "0,0", "0"]) {
      const r = await run(stock, ours, ["-t", "1", "-A", a]);
      expect(r.client.stderr).toBe("");
      expect(r.client.code).toBe(0);
    }
    const bad = await ours(["-c", "127.0.0.1", "-p", String(port()), "-A", "abc"]).done;
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("unable to set CPU affinity");
  }, T);

  test.skipIf(availableParallelism() < 2)("-A on our server pins it (main thread) to that CPU; a stock client's ',m' is taken", async () => {
    const p = port();
    const srv = ours(["-s", "-p", String(p), "-A", "1"]);
    try {
      await waitListening(p);
      const allowed = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${srv.pid}/status`, "latin1"))?.[1];
      expect(allowed).toBe("1");
      const c = await stock(["-c", "127.0.0.1", "-p", String(p), "-t", "1", "-A", "0,0", "-J"]).done;
      expect(json(c).error).toBeUndefined();
    } finally {
      srv.kill();
      await srv.done;
    }
  }, T);

  test("-T title prefixes every output line as stock does", async () => {
    const ref = await run(stock, stock, ["-t", "1", "-T", "hi"]);
    const mine = await run(stock, ours, ["-t", "1", "-T", "hi"]);
    const lines = (f: Finished) => f.stdout.split("\n").filter((l) => l !== "");
    expect(lines(ref.client).every((l) => l.startsWith("hi:  "))).toBe(true);
    expect(lines(mine.client).length).toBeGreaterThan(5);
    for (const l of lines(mine.client)) expect(l.startsWith("hi:  ")).toBe(true);
  }, T);

  test("--sctp: not supported by anyperf (not an unrecognized option)", async () => {
    const r = await ours(["-c", "127.0.0.1", "-p", String(port()), "--sctp"]).done;
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--sctp is not supported by anyperf");
    expect(r.stderr).not.toContain("unrecognized");
  }, T);

  test("UDP: the real local address, and -V's 'Setting UDP block size' line", async () => {
    const ref = await run(stock, stock, ["-u", "-t", "1", "-V"]);
    const mine = await run(stock, ours, ["-u", "-t", "1", "-V"]);
    const local = (f: Finished) => /\] local (\S+) port/.exec(f.stdout)?.[1];
    expect(local(ref.client)).toBe("127.0.0.1");
    expect(local(mine.client)).toBe("127.0.0.1");
    const setting = (f: Finished) => /^Setting UDP block size to \d+$/m.exec(f.stdout)?.[0];
    expect(setting(ref.client)).toBeDefined();
    expect(setting(mine.client)).toBe(setting(ref.client));
    // Right after the MSS line, as stock prints it.
    const after = (f: Finished) => f.stdout.split("\n")[f.stdout.split("\n").findIndex((l) => l.startsWith("Control connection MSS")) + 1];
    expect(after(mine.client)).toBe(after(ref.client));
  }, T);

  test("UDP at the default 1 Mbit/s for 2 s: the rate stock sends (no first-second burst)", async () => {
    const ref = await run(stock, stock, ["-u", "-t", "2", "-J"]);
    const mine = await run(stock, ours, ["-u", "-t", "2", "-J"]);
    const sent = (f: Finished) => json(f).end.sum!.packets!;
    const bps = (f: Finished) => json(f).end.sum!.bits_per_second!;
    expect(sent(mine.client)).toBe(sent(ref.client));
    expect(Math.abs(bps(mine.client) / bps(ref.client) - 1)).toBeLessThan(0.02);
  }, T);

  test("-O: interval labels as stock prints them (omitted seconds restart at 0.00), within timer jitter", async () => {
    // What stock 3.12 prints for this command (its own runs race now and then: an omitted interval missing, or
    // "0.50-0.50"), so the live stock run is not the reference.
    const stockLabels = ["0.00-1.00 (omitted)", "1.00-2.00 (omitted)", "0.00-1.00", "1.00-2.00", "2.00-3.00", "0.00-3.00 sender", "0.00-3.00 receiver"];
    const mine = labels((await run(stock, ours, ["-t", "3", "-O", "2", "-b", "100M"])).client.stdout);
    const words = (l: string[]) => l.map((x) => x.replace(/^[\d.]+-[\d.]+ ?/, ""));
    expect(words(mine)).toEqual(words(stockLabels));
    const ends = (l: string[]) => l.flatMap((x) => x.split(" ")[0]!.split("-").map(Number));
    ends(mine).forEach((t, i) => expect(Math.abs(t - ends(stockLabels)[i]!)).toBeLessThanOrEqual(0.1));
  }, T);
});
