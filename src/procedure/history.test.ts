import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendHistory, readHistory, type HistoryEntryInput } from "./history.ts";
import { optionMap, setupDifferences } from "./history-cli.ts";
import { readHostFacts } from "./host-facts.ts";
import { UserError } from "../errors.ts";

const dir = () => mkdtempSync(join(tmpdir(), "anyperf-history-"));
const entry = (over: Partial<HistoryEntryInput> = {}): HistoryEntryInput => ({
  v: 1, id: "a1", time: "2026-01-01T00:00:00.000Z", argv: ["-P", "2"], mode: "loopback", peer: "127.0.0.1", test: "stream",
  host: { kernel: "6.1", sysctls: { "net.ipv4.tcp_congestion_control": "cubic" } }, results: { throughput_bps: 1e9 }, ...over,
});

describe("the history file", () => {
  test("one line per run, read back as written", () => {
    const f = join(dir(), "sub", "h.jsonl");
    appendHistory(f, entry());
    appendHistory(f, entry({ id: "b2", results: { throughput_bps: 2e9 } }));
    const lines = readFileSync(f, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    const back = readHistory(f);
    expect(back.map((e) => [e.id, e.results.throughput_bps])).toEqual([["a1", 1e9], ["b2", 2e9]]);
  });

  test("an older-schema line (v 0, or no v, no host, no argv, no point) still reads, defaults filled in", () => {
    const f = join(dir(), "old.jsonl");
    writeFileSync(f, [
      JSON.stringify({ v: 0, id: "old0", time: "2025-01-01T00:00:00Z", mode: "loopback", results: { throughput_bps: 5 } }),
      JSON.stringify({ id: "old1", time: "2025-01-02T00:00:00Z", mode: "client", peer: "192.0.2.1", results: { transactions_per_second: 9 }, test: "rr" }),
    ].join("\n") + "\n");
    const [a, b] = readHistory(f);
    expect(a).toMatchObject({ v: 0, id: "old0", argv: [], point: {}, host: { sysctls: {} }, errors: [], test: "stream" });
    expect(b).toMatchObject({ v: 0, id: "old1", test: "rr", results: { transactions_per_second: 9 } });
  });

  test("a fragment a killed writer left, and a line still being written, are passed over; the next line starts fresh", () => {
    const f = join(dir(), "cut.jsonl");
    writeFileSync(f, JSON.stringify(entry()) + "\n" + JSON.stringify(entry({ id: "cut" })).slice(0, 40));
    expect(readHistory(f).map((e) => e.id)).toEqual(["a1"]);
    appendHistory(f, entry({ id: "c3" }));
    const back = readHistory(f);
    expect(back.map((e) => e.id)).toEqual(["a1", "c3"]);
    expect(back.cut).toBe(1);
  });

  test("a line that is not a history entry is named with its line number and the fix", () => {
    const f = join(dir(), "bad.jsonl");
    writeFileSync(f, JSON.stringify(entry()) + "\n{\"id\": 5}\n");
    expect(() => readHistory(f)).toThrow(UserError);
    expect(() => readHistory(f)).toThrow(/bad.jsonl:2: not a history line; remove that line/);
  });

  test("compare names the option and the sysctl that changed, and nothing that did not", () => {
    const a = readHistoryOf([entry(), entry({ id: "b", argv: ["-P", "4", "-R"], host: { kernel: "6.1", sysctls: { "net.ipv4.tcp_congestion_control": "bbr" } } })]);
    expect(setupDifferences(a[0]!, a[1]!)).toEqual(["option -P: 2 -> 4", "option -R: (not set) -> ", "sysctl net.ipv4.tcp_congestion_control: cubic -> bbr"]);
    expect(setupDifferences(a[0]!, a[0]!)).toEqual([]);
    expect([...optionMap(["-t", "2", "--udp", "-b=10M"])]).toEqual([["-t", "2"], ["--udp", ""], ["-b", "10M"]]);
  });

  test("host facts from a fake /proc and /sys: kernel, CPU model, sysctls, the interface to the peer", () => {
    const root = dir();
    const w = (p: string, t: string) => {
      mkdirSync(join(root, p, ".."), { recursive: true });
      writeFileSync(join(root, p), t);
    };
    w("proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU 3000\n");
    w("proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
    w("proc/sys/net/ipv4/tcp_congestion_control", "cubic\n");
    const facts = readHostFacts("not-an-address", { proc: join(root, "proc"), sys: join(root, "sys") });
    expect(facts).toMatchObject({ cpu_model: "Test CPU 3000", sysctls: { "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.tcp_congestion_control": "cubic" } });
    expect(facts.interface).toBeUndefined();
    expect(readHostFacts("127.0.0.1").interface).toBe(process.platform === "linux" ? "lo" : undefined);
  });
});

function readHistoryOf(entries: HistoryEntryInput[]) {
  const f = join(dir(), "c.jsonl");
  for (const e of entries) appendHistory(f, e);
  return readHistory(f);
}
