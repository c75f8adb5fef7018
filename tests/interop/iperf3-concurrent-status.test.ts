/**
 * Two stock iperf3 3.12 clients at once into one `anyperf iperf3 -s --http`: /status lists both running tests and
 * /metrics carries both, told apart by the labels dialect, test, peer (its address) and role, next to the process-wide bytes
 * counter (issue 16 item 6; before, /metrics showed only the newer test).
 */
import { expect, test } from "bun:test";
import { StatusDocument } from "../../src/status/schema.ts";
import { peerAddress } from "../../src/status/metrics.ts";
import { assertFree, hasStockIperf3, json, oursMain, sleep, stock, waitListening } from "./iperf3-harness.ts";
import { freePorts } from "../support/processes.ts";

// Free ports picked at run time: the range is also the kernel's ephemeral one.
const PORT = freePorts(37010, 37040, 2);
const HTTP = PORT + 1;
const base = `http://127.0.0.1:${HTTP}`;

async function status(): Promise<StatusDocument | undefined> {
  try {
    return StatusDocument.parse(await (await fetch(`${base}/status`)).json());
  } catch {
    return undefined;
  }
}

/** Label sets of every sample of `name` in the exposition. */
function series(text: string, name: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}\\{(.*)\\} \\S+$`).exec(line);
    if (m) out.push(Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!])));
  }
  return out;
}

test.skipIf(!hasStockIperf3())("two stock clients into one server: both in /status and in /metrics, labelled apart", async () => {
  assertFree(PORT);
  assertFree(HTTP);
  const server = oursMain(["-s", "-p", String(PORT), "--http", `127.0.0.1:${HTTP}`], 60_000);
  try {
    // A loaded host (8 helpers on 2 cores) has taken over 8 s to start the server from source.
    await waitListening(PORT, 30_000).catch((e: Error) => {
      throw new Error(`${e.message}; the server wrote: ${server.stdout()}${server.stderr()}`);
    });
    const a = stock(["-c", "127.0.0.1", "-p", String(PORT), "-t", "4", "-b", "200M", "-J"]);
    const b = stock(["-c", "127.0.0.1", "-p", String(PORT), "-t", "4", "-b", "100M", "-J"]);
    let both: StatusDocument | undefined;
    let metrics = "";
    const end = Date.now() + 6000;
    while (Date.now() < end) {
      const d = await status();
      if (d && d.running.filter((t) => t.phase === "measuring" && t.bytes > 0).length === 2) {
        both = d;
        metrics = await (await fetch(`${base}/metrics`)).text();
        break;
      }
      await sleep(100);
    }
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);

    expect(both).toBeDefined();
    const running = both!.running;
    expect(new Set(running.map((t) => t.id)).size).toBe(2);
    expect(new Set(running.map((t) => t.peer)).size).toBe(2);
    for (const t of running) expect(t).toMatchObject({ mode: "iperf3", role: "server" });

    // Both tests' series, each with its own test id and peer.
    const bytes = series(metrics, "anyperf_bytes_total");
    const tests = new Set(bytes.map((l) => l.test));
    expect([...tests].sort()).toEqual(running.map((t) => t.id).sort());
    for (const l of bytes) {
      expect(l.dialect).toBe("iperf3");
      expect(l.role).toBe("server");
      expect(l.peer).toBe(peerAddress(running.find((t) => t.id === l.test)!.peer!));
    }
    expect(series(metrics, "anyperf_average_throughput_bytes_per_second").length).toBe(2);
    expect(metrics).toMatch(/^anyperf_process_bytes_total\{mode="iperf3",role="server",direction="received"\} [1-9]\d*$/m);

    // After both: the process total holds both tests' bytes (what each stock client's receiver got, near enough).
    await sleep(300);
    const after = (await status())!;
    const received = [ra, rb].reduce((n, r) => n + (json(r).end.sum_received!.bytes ?? 0), 0);
    expect(after.bytesTotal).toBeGreaterThan(received * 0.9);
    expect(after.bytesTotal).toBeLessThan(received * 1.1);
  } finally {
    server.kill();
    await server.done;
  }
}, 60_000);
