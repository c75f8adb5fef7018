/** anyperf history and compare over a history file of runs of different kinds (issue 29 item 7). */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.ts";
import { appendHistory, type HistoryEntryInput } from "./history.ts";
import { compareMain, historyMain } from "./history-cli.ts";

const entry = (over: Partial<HistoryEntryInput>): HistoryEntryInput => ({
  v: 1, id: "a1", time: "2026-01-01T00:00:00.000Z", argv: [], mode: "client", peer: "10.0.0.2", test: "stream", transport: "tcp",
  host: { kernel: "6.1", sysctls: {} }, results: { throughput_bps: 1e9 }, ...over,
});

function file(): string {
  const f = join(mkdtempSync(join(tmpdir(), "anyperf-history-cli-")), "h.jsonl");
  appendHistory(f, entry({ id: "aaaa0001", transport: "udp", results: { throughput_bps: 9.4e8, packets_per_second: 8e4, loss_percent: 0.1 } }));
  appendHistory(f, entry({ id: "bbbb0002", test: "rr", results: { throughput_bps: 1.1e6, transactions_per_second: 68_000, latency_p50_us: 14 } }));
  appendHistory(f, entry({ id: "cccc0003", transport: "udp", results: { throughput_bps: 9.1e8 } }));
  return f;
}

/** What a CLI entry prints on stdout. */
async function printed(run: () => Promise<number>): Promise<{ code: number; out: string }> {
  const log = console.log;
  let out = "";
  console.log = (...a: unknown[]) => void (out += `${a.join(" ")}\n`);
  try {
    return { code: await run(), out };
  } finally {
    console.log = log;
  }
}

describe("history", () => {
  test("has a kind column: UDP bulk, TCP RR", async () => {
    const { code, out } = await printed(() => historyMain([file()]));
    expect(code).toBe(0);
    const [head, ...rows] = out.trim().split("\n");
    expect(head).toMatch(/^id\s+time\s+mode\s+kind\s+peer/);
    expect(rows.map((r) => r.split(/\s{2,}/)[3])).toEqual(["UDP bulk", "TCP RR", "UDP bulk"]);
  });
});

describe("compare", () => {
  test("refuses runs of different kinds in one line, exit 2, naming --any-kind", async () => {
    const f = file();
    const e = await compareMain(["aaaa", "bbbb", "--history", f]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).exitCode).toBe(2);
    expect((e as UserError).message).toBe("compare: aaaa0001 is a UDP bulk run, bbbb0002 a TCP RR run: their figures do not compare; pass --any-kind to set them side by side anyway");
  });

  test("compares runs of one kind, and of different kinds with --any-kind", async () => {
    const f = file();
    const same = await printed(() => compareMain(["aaaa", "cccc", "--history", f]));
    expect(same.code).toBe(0);
    expect(same.out).toMatch(/^throughput\s+940 Mbit\/s\s+910 Mbit\/s\s+-3\.2 %$/m);
    const any = await printed(() => compareMain(["aaaa", "bbbb", "--history", f, "--any-kind"]));
    expect(any.code).toBe(0);
    expect(any.out).toMatch(/^throughput\s/m);
  });
});
