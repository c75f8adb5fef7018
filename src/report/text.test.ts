/**
 * The human report of real runs (src/testdata/report/, `anyperf client --json` over loopback): issue 29 item 3.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Results } from "./result.ts";
import { textReport } from "./text.ts";

const fixture = (name: string) => Results.parse(JSON.parse(readFileSync(join(import.meta.dir, "..", "testdata", "report", name), "utf8")));

describe("client --bidir", () => {
  test("every stream this end has is a row: the streams it receives and the streams it sends", () => {
    const r = fixture("client-bidir.json");
    const lines = textReport(r).split("\n");
    const rows = lines.filter((l) => /^\[\s*\d+\] (recv|send) /.test(l));
    const own = rows.slice(0, r.streams.length).map((l) => l.slice(0, 12));
    const row = (s: (typeof r.streams)[number]) => `[${String(s.id).padStart(3)}] ${s.side.padEnd(6)}`;
    expect(own).toEqual([...r.streams.filter((s) => s.side === "recv").map(row), ...r.streams.filter((s) => s.side === "send").map(row)]);
    expect(own.filter((l) => l.includes(" send "))).toHaveLength(2);
    expect(own.filter((l) => l.includes(" recv "))).toHaveLength(2);
  });
});

describe("a server lost mid-test (stock iperf3 -s killed 2 s into -t 4)", () => {
  test("the sender's own bytes are summed as sent, and the errors say why nothing came from the server", () => {
    const r = fixture("client-iperf3-lost.json");
    const text = textReport(r);
    expect(r.remote).toBeUndefined();
    expect(text).toContain(`\n[SUM] send    ${text.split("\n").find((l) => l.startsWith("[  0] send"))!.slice(14)}\n`);
    expect(text).not.toContain("[SUM] recv");
    expect(text).toContain("\nerror: control socket has closed unexpectedly\n");
  });
});

describe("a sender below its -b pace", () => {
  test("is said in the report: client -u -b 1G that sent 934 Mbit/s", () => {
    const r = fixture("client-udp-b1g.json");
    expect(r.target_bps).toBe(1e9);
    expect(textReport(r)).toContain("\nsender missed its -b pace: sent 934 Mbit/s, 93.4 % of 1.00 Gbit/s\n");
    expect(r.diagnosis?.evidence).toContain("the sender missed its -b pace: sent 934 Mbit/s, 93 % of 1.00 Gbit/s");
  });

  test("a sender at its pace, or without -b, has no such line", () => {
    // The fixture's diagnosis says it too (above): the report's own line is what is looked at here.
    const r = { ...fixture("client-udp-b1g.json"), diagnosis: undefined };
    expect(textReport({ ...r, target_bps: r.sender!.throughput_bps })).not.toContain("missed its -b pace");
    expect(textReport({ ...r, target_bps: undefined })).not.toContain("missed its -b pace");
  });
});

describe("client over many servers (-R -u -l 64 from two anyperf serve, a third not there)", () => {
  const r = fixture("client-many-udp-r.json");
  const text = textReport(r);

  test("a row per server in the order given, the missing one named, then the whole run over the servers that ran", () => {
    const rows = text.split("\n").filter((l) => /^(127\.0\.0\.1:\d+|whole run) /.test(l));
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual([...r.hosts!.map((h) => `${h.host}:${h.port}`), "whole"]);
    expect(text).toContain(`  failed: ${r.hosts![2]!.error}\n`);
    expect(rows[3]).toEndWith("(2 of 3 servers)");
    // 332,477 + 340,572 pkt/s from the two servers' receivers.
    expect(rows[3]).toContain(`${Math.round(r.summary.packets_per_second!).toLocaleString("en-US")} pkt/s`);
    expect(r.summary.packets_per_second).toBeCloseTo(r.hosts![0]!.summary!.packets_per_second! + r.hosts![1]!.summary!.packets_per_second!, 6);
  });

  test("this host as sar -n DEV and mpstat read it: the interface that moved packets, each core's busy and softirq", () => {
    const lo = r.cpu.host!.nics!.lo!;
    expect(text).toContain(`\nthis host's lo: in ${Math.round(lo.rxPacketsPerSecond!).toLocaleString("en-US")} pkt/s `);
    expect(text.match(/^this host's \w+: in /gm)).toHaveLength(1);
    const cores = r.cpu.host!.perCpu!;
    expect(text).toContain(`\nthis host's cores: ${cores.map((c) => `cpu${c.cpu} ${c.busy!.toFixed(1)} % (softirq ${c.softirq!.toFixed(1)} %)`).join(", ")}\n`);
  });

  test("a one-server run has no such lines", () => {
    expect(textReport({ ...r, hosts: undefined })).not.toContain("this host's");
  });
});
