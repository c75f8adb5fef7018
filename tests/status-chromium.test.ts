import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStatusServer } from "../src/status/server.ts";
import { StatusDocument } from "../src/status/schema.ts";
import { fakeSource } from "./fixtures/status/fake-run.ts";
import { freePorts, spawnProc, waitBound } from "./support/processes.ts";

/**
 * Headless Chromium (Debian `chromium`) loads the live page from a token-protected status server while a test
 * runs, and we watch the page through the DevTools protocol: the chart (the server's /chart.svg, drawn by the
 * report's chart code, swapped into the page) gains points and the figures follow the run. Set ANYPERF_SCREENSHOT=/path.png to keep a screenshot of the page.
 */

const chromium = Bun.which("chromium") ?? Bun.which("chromium-browser");
if (!chromium) console.warn("status-chromium: SKIPPED, chromium not found: apt-get install chromium");
const TOKEN = "page-token";
const dir = mkdtempSync(join(tmpdir(), "anyperf-chromium-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A minimal DevTools protocol client over Bun's WebSocket. */
async function cdp(wsUrl: string) {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`cannot open ${wsUrl}`));
  });
  let next = 1;
  const waiting = new Map<number, (msg: { result?: unknown; error?: { message: string } }) => void>();
  ws.onmessage = (ev) => {
    const msg = JSON.parse(String(ev.data));
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
  };
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => reject(new Error(`${method} timed out`)), 10_000);
      waiting.set(id, (msg) => {
        clearTimeout(timer);
        msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result);
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** Chromium headless, quiet: no GPU, no network of its own (updates, sync, QUIC probes). */
const HEADLESS = [chromium!, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** The page's DOM after 3 s of virtual time (its polls and fetches done), as Chromium's --dump-dom prints it. */
async function dumpDom(url: string, profileName: string): Promise<string> {
  const proc = Bun.spawn([...HEADLESS, `--user-data-dir=${join(dir, profileName)}`, "--virtual-time-budget=3000", "--dump-dom", url], { stdout: "pipe", stderr: "ignore" });
  const killer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  try {
    return await new Response(proc.stdout).text();
  } finally {
    clearTimeout(killer);
    proc.kill();
    await proc.exited;
  }
}

/** Headless Chromium on `url`, driven through its DevTools protocol; `origin` tells our page from Chromium's own. */
async function openPage(url: string, origin: string, profileName: string, windowSize = "1000,900") {
  const profile = join(dir, profileName);
  const proc = Bun.spawn(
    [
      ...HEADLESS,
      `--user-data-dir=${profile}`,
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      `--window-size=${windowSize}`,
      url,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  const close = async (client?: Awaited<ReturnType<typeof cdp>>) => {
    await client?.send("Browser.close").catch(() => {});
    client?.close();
    const killer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    proc.kill();
    await proc.exited;
    clearTimeout(killer);
  };
  try {
    // Chromium writes the port it picked into the profile.
    const portFile = join(profile, "DevToolsActivePort");
    const deadline = Date.now() + 20_000;
    while (!existsSync(portFile) || !readFileSync(portFile, "utf8").includes("\n")) {
      if (Date.now() > deadline) throw new Error("chromium did not open its DevTools port in 20 s");
      await Bun.sleep(100);
    }
    const devPort = Number(readFileSync(portFile, "utf8").split("\n")[0]);
    let wsUrl: string | undefined;
    while (!wsUrl) {
      if (Date.now() > deadline) throw new Error("chromium shows no page in 20 s");
      const list = (await (await fetch(`http://127.0.0.1:${devPort}/json/list`)).json()) as { type: string; url: string; webSocketDebuggerUrl: string }[];
      wsUrl = list.find((t) => t.type === "page" && t.url.startsWith(origin))?.webSocketDebuggerUrl;
      if (!wsUrl) await Bun.sleep(100);
    }
    const client = await cdp(wsUrl);
    const evaluate = async <T>(expression: string): Promise<T | undefined> => {
      const r = (await client.send("Runtime.evaluate", { expression, returnByValue: true })) as { result: { value?: string } };
      return r.result.value === undefined ? undefined : (JSON.parse(r.result.value) as T);
    };
    const screenshot = async (path: string) => {
      const shot = (await client.send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true })) as { data: string };
      writeFileSync(path, Buffer.from(shot.data, "base64"));
    };
    return { client, evaluate, screenshot, close: () => close(client) };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * A real serve, a real `anyperf client --paused` against it with `--http`, and Chromium on the client's page; `body`
 * sends POST /start when the page is up. Every process is ended after it.
 */
async function pausedClientPage(
  clientArgs: string[],
  profile: string,
  windowSize: string,
  body: (c: { http: number; page: Awaited<ReturnType<typeof openPage>>; client: ReturnType<typeof spawnProc> }) => Promise<void>,
): Promise<void> {
  const main = join(import.meta.dir, "..", "main.ts");
  const native = freePorts(41500, 41700, 2);
  const http = native + 1;
  const serve = spawnProc([process.execPath, main, "serve", "-p", String(native), "--iperf3", "off", "--iperf", "off", "--netserver", "off", "--ntttcp", "off"], 90_000);
  let client: ReturnType<typeof spawnProc> | undefined;
  let page: Awaited<ReturnType<typeof openPage>> | undefined;
  try {
    await waitBound(native, "tcp", 30_000);
    client = spawnProc([process.execPath, main, "client", "127.0.0.1", "-p", String(native), ...clientArgs, "--http", `127.0.0.1:${http}`, "--linger", "60", "--paused"], 90_000);
    await waitBound(http, "tcp", 30_000);
    page = await openPage(`http://127.0.0.1:${http}/`, `http://127.0.0.1:${http}/`, profile, windowSize);
    await body({ http, page, client });
  } finally {
    await page?.close();
    client?.kill("SIGINT");
    await client?.done;
    serve.kill("SIGINT");
    await serve.done;
  }
}

interface PageState {
  points: number;
  line: string;
  /** The chart's SVG elements in the page: the server's svg, with its path and axis text. */
  svgs: number;
  title: string;
  test: string;
  phase: string;
  figures: string;
  streams: number;
  error: string;
}

const READ_PAGE = `JSON.stringify({
  points: Number(document.getElementById("chart").dataset.points),
  line: document.querySelector("#chart svg path")?.getAttribute("d") ?? "",
  svgs: document.querySelectorAll("#chart svg").length,
  title: document.querySelector("#chart svg title")?.textContent ?? "",
  test: document.getElementById("chart").dataset.test,
  phase: document.getElementById("phase").textContent,
  figures: document.getElementById("figures").textContent,
  streams: document.querySelectorAll("#streams tbody tr").length,
  error: document.getElementById("error").textContent,
})`;

test.skipIf(!chromium)(
  "the live page's chart and figures follow a running test",
  async () => {
    const { source, run } = fakeSource({ intervals: 400, mode: "iperf3", role: "client" });
    run.step();
    const status = startStatusServer({ host: "127.0.0.1", port: 0, token: TOKEN }, source);
    const page = await openPage(`${status.url}#token=${TOKEN}`, status.url, "profile");
    const stepper = setInterval(() => run.step(), 150);
    try {
      const read = async (): Promise<PageState> => (await page.evaluate<PageState>(READ_PAGE)) ?? ({ points: 0 } as PageState);
      const waitFor = async (cond: (s: PageState) => boolean, what: string): Promise<PageState> => {
        const end = Date.now() + 15_000;
        let s: PageState = await read().catch(() => ({ points: 0 }) as PageState);
        while (!cond(s)) {
          if (Date.now() > end) throw new Error(`page never showed ${what}; last state ${JSON.stringify(s)}`);
          await Bun.sleep(100);
          s = await read().catch(() => s);
        }
        return s;
      };

      const first = await waitFor((s) => s.points >= 2 && s.phase === "measuring", "a measuring chart");
      expect(first.error).toBe("");
      expect(first.test).toBe("t1");
      expect(first.streams).toBe(2);
      expect(first.figures).toContain("Gbit/s");
      // One SVG, the server's, with a path drawn through the intervals so far.
      expect(first.svgs).toBe(1);
      expect(first.line).toMatch(/^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+$/);
      expect(first.title).toBe("test t1: throughput, measuring");
      const later = await waitFor((s) => s.points >= first.points + 5, "five more chart points");
      expect(later.line).not.toBe(first.line);
      expect(later.line.split(" ")).toHaveLength(later.points);
      // The chart holds exactly the intervals the run produced so far (give or take one in flight).
      expect(Math.abs(later.points - run.seq)).toBeLessThanOrEqual(2);
      // The figures follow too: elapsed (1 s per fake interval) moves on and stays within an interval or two of the run.
      const elapsed = (s: PageState) => Number(/elapsed(\d+)\.0 s/.exec(s.figures)?.[1] ?? -1);
      const moved = await waitFor((s) => elapsed(s) > elapsed(first) + 2, "the elapsed figure moving on");
      expect(run.seq - elapsed(moved)).toBeLessThanOrEqual(3);
      expect(moved.figures).toContain("remaining");

      if (process.env.ANYPERF_SCREENSHOT) await page.screenshot(process.env.ANYPERF_SCREENSHOT);
    } finally {
      clearInterval(stepper);
      await page.close();
      await status.stop();
    }
  },
  60_000,
);

const READ_END = `JSON.stringify({
  phase: document.getElementById("phase").textContent,
  figures: document.getElementById("figures").textContent,
  streamColumns: [...document.querySelectorAll("#streams thead th")].map((th) => th.textContent),
  streamRows: [...document.querySelectorAll("#streams tbody tr")].map((tr) => [...tr.cells].map((td) => td.textContent)),
  diagnosis: document.querySelector("#end .diagnosis")?.textContent ?? "",
  ends: [...document.querySelectorAll("#ends tr")].slice(1).map((tr) => [...tr.cells].map((td) => td.textContent)),
  coreCharts: document.querySelectorAll("#cores svg svg").length,
  coreTitles: [...document.querySelectorAll("#cores svg svg > title")].map((t) => t.textContent),
  liveCores: document.querySelector("#livecores svg > title")?.textContent ?? "",
})`;
interface EndState {
  phase: string;
  figures: string;
  streamColumns: string[];
  streamRows: string[][];
  diagnosis: string;
  ends: string[][];
  coreCharts: number;
  coreTitles: string[];
  liveCores: string;
}

test.skipIf(!chromium)(
  "a real client run against a real serve: CPU per core while it runs; when it ends, both ends, the diagnosis and both ends' cores; TCP streams show no packet or retransmit column",
  () =>
    pausedClientPage(["-t", "4", "-P", "2"], "profile-end", "1200,1000", async ({ http, page, client }) => {
      const read = async () => (await page!.evaluate<EndState>(READ_END).catch(() => undefined)) ?? ({ phase: "", ends: [], coreCharts: 0 } as unknown as EndState);
      const until = async (cond: (s: EndState) => boolean, what: string, ms: number) => {
        const end = Date.now() + ms;
        let s = await read();
        while (!cond(s)) {
          if (Date.now() > end) throw new Error(`page never showed ${what}; last state ${JSON.stringify(s)}\nclient: ${client!.stderr()}`);
          await Bun.sleep(200);
          s = await read();
        }
        return s;
      };
      // The client waits for POST /start: the page (Chromium starts slowly on a loaded host) sees the run from its start.
      await until((s) => s.phase === "waiting", "the waiting client", 30_000);
      expect((await fetch(`http://127.0.0.1:${http}/start`, { method: "POST" })).status).toBe(200);
      const live = await until((s) => s.phase === "measuring" && s.streamRows.length > 0 && s.liveCores !== "", "a measuring run with its cores", 30_000);
      expect(live.liveCores).toStartWith("CPU per core by mode, this end, last interval");
      const shotLive = process.env.ANYPERF_SCREENSHOT_DIR ? join(process.env.ANYPERF_SCREENSHOT_DIR, "live-running.png") : join(dir, "live-running.png");
      await page.screenshot(shotLive);
      // TCP: the stream table has no datagram, loss or retransmit column (they were always 0 and "–").
      expect(live.streamColumns).toEqual(["id", "side", "now", "average", "bytes"]);
      const done = await until((s) => s.ends.length === 2 && s.coreCharts === 2 && s.diagnosis !== "", "both ends, the diagnosis and both ends' cores", 40_000);
      expect(done.ends.map((r) => r[0])).toEqual(["this end", "remote end"]);
      for (const row of done.ends) {
        expect(row[2]).toMatch(/bit\/s$/);
        expect(row[3]).toMatch(/^\d+\.\d %$/);
      }
      expect(done.diagnosis).toMatch(/^(link|sender-cpu|receiver-cpu|window|loss|unclear): ./);
      expect(done.coreTitles[0]).toStartWith("CPU per core by mode, this end");
      expect(done.coreTitles[1]).toStartWith("CPU per core by mode, remote end");
      // Done: the live per-core chart gives way to both ends'.
      expect(done.liveCores).toBe("");
      const shot = process.env.ANYPERF_SCREENSHOT_DIR ? join(process.env.ANYPERF_SCREENSHOT_DIR, "live-end.png") : join(dir, "live-end.png");
      await page.screenshot(shot);
      expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
    }),
  150_000,
);

test.skipIf(!chromium)("request/response: the page shows the latency percentiles and each stream's transactions", async () => {
  const { source, run } = fakeSource({ intervals: 50, rr: true, mode: "netperf", role: "client" });
  run.step();
  run.step();
  const status = startStatusServer({ host: "127.0.0.1", port: 0 }, source);
  try {
    const dom = await dumpDom(status.url, "profile-rr");
    expect(dom).toContain('<div class="k">latency p50 / p99</div><div class="v">17.0 µs / 34.0 µs</div>');
    expect(dom).toContain('<div class="k">latency p99.9</div><div class="v">120.0 µs</div>');
    expect(dom).toContain("<th>transactions</th>");
    expect(dom).not.toContain("<th>datagrams</th>");
  } finally {
    await status.stop();
  }
}, 90_000);

test.skipIf(!chromium)("without the token the page says how to pass it", async () => {
  const { source } = fakeSource({ intervals: 5 });
  const status = startStatusServer({ host: "127.0.0.1", port: 0, token: TOKEN }, source);
  try {
    expect(await dumpDom(status.url, "profile2")).toContain("This status server needs its token: open /#token=TOKEN");
  } finally {
    await status.stop();
  }
}, 40_000);

const READ_MEASUREMENT = `JSON.stringify({
  phase: document.getElementById("measurement").dataset.phase,
  probe: Number(document.getElementById("measurement").dataset.probe),
  load: Number(document.getElementById("measurement").dataset.load),
  latencyLines: document.querySelectorAll("#measurement svg svg:last-child path").length,
  titles: [...document.querySelectorAll("#measurement svg svg > title")].map((t) => t.textContent),
  figures: document.getElementById("figures").textContent,
  chartHidden: document.getElementById("chart").hidden,
})`;
interface MeasurementState {
  phase: string;
  probe: number;
  load: number;
  latencyLines: number;
  titles: string[];
  figures: string;
  chartHidden: boolean;
}

test.skipIf(!chromium)(
  "--responsiveness: /status carries the probe's latency per interval while it runs, and the page draws it beside the load's throughput",
  () =>
    pausedClientPage(["--responsiveness", "-t", "2", "-P", "2", "--no-history"], "profile-resp", "1200,1400", async ({ http, page, client }) => {
      const status = async () => StatusDocument.parse(await (await fetch(`http://127.0.0.1:${http}/status`)).json());
      const until = async <T>(read: () => Promise<T>, cond: (s: T) => boolean, what: string, ms: number): Promise<T> => {
        const end = Date.now() + ms;
        let s = await read();
        while (!cond(s)) {
          if (Date.now() > end) throw new Error(`never saw ${what}; last ${JSON.stringify(s).slice(0, 2000)}\nclient: ${client!.stderr()}`);
          await Bun.sleep(200);
          s = await read();
        }
        return s;
      };
      const readPage = async () => (await page!.evaluate<MeasurementState>(READ_MEASUREMENT).catch(() => undefined)) ?? ({ probe: 0, load: 0 } as MeasurementState);
      await until(readPage, (s) => s.figures !== undefined, "the page", 30_000);
      expect((await fetch(`http://127.0.0.1:${http}/start`, { method: "POST" })).status).toBe(200);

      // While the upload phase runs: the idle probe's samples, then the upload's probe and load, on one time axis.
      const doc = await until(status, (d) => (d.measurement?.probe.some((s) => s.phase === "upload") ?? false) && (d.measurement?.load.length ?? 0) > 0, "upload samples", 60_000);
      expect(doc.running.length).toBeGreaterThan(0);
      const m = doc.measurement!;
      expect(m.kind).toBe("responsiveness");
      // Both halves of the probe: its TCP request/response and its UDP pings, each interval its own percentiles.
      expect(new Set(m.probe.map((s) => s.transport))).toEqual(new Set(["tcp", "udp"]));
      const idle = m.probe.filter((s) => s.phase === "idle" && s.transport === "tcp");
      // The idle probe measured 2 s in 0.25 s intervals (PROBE_INTERVAL_S): about 8 samples, each with its percentiles.
      expect(idle.length).toBeGreaterThanOrEqual(6);
      for (const s of m.probe) expect(s.p50 > 0 && s.p50 <= s.p90 && s.p90 <= s.p99).toBe(true);
      for (let i = 1; i < m.probe.length; i++) expect(m.probe[i]!.t).toBeGreaterThanOrEqual(m.probe[i - 1]!.t);
      expect(m.load.every((s) => s.phase === "upload" && s.bitsPerSecond > 0)).toBe(true);
      // The upload's samples come after the idle ones: its runs started once the idle probe ended.
      expect(m.load[0]!.t).toBeGreaterThan(idle[idle.length - 1]!.t);

      const shown = await until(readPage, (s) => s.probe > 2 * idle.length && s.load > 0, "the measurement chart with loaded samples", 30_000);
      expect(shown.titles).toEqual(["responsiveness: the load's throughput, " + shown.phase + " phase", "responsiveness: the probe's round trip, " + shown.phase + " phase"]);
      // The TCP probe's p50, p90, p99 and the UDP pings' p50.
      expect(shown.latencyLines).toBe(4);
      // The shown test is one of the measurement's parts: its own chart gives way.
      expect(shown.chartHidden).toBe(true);
      expect(shown.figures).toMatch(/responsiveness probe p50 \/ p99 \((idle|upload|download|bidir)\)[\d.]+ (µs|ms) \/ [\d.]+ (µs|ms)/);
      const shot = process.env.ANYPERF_SCREENSHOT_DIR ? join(process.env.ANYPERF_SCREENSHOT_DIR, "live-responsiveness.png") : join(dir, "live-responsiveness.png");
      await page.screenshot(shot);

      // To the end: every phase's samples, the bidir phase last.
      const last = await until(status, (d) => d.measurement?.phase === "bidir" && d.phase === "done", "the bidir phase done", 60_000);
      expect(new Set(last.measurement!.probe.map((s) => s.phase))).toEqual(new Set(["idle", "upload", "download", "bidir"]));
      expect(new Set(last.measurement!.load.map((s) => s.phase))).toEqual(new Set(["upload", "download", "bidir"]));
    }),
  180_000,
);
