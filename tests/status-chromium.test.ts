import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStatusServer } from "../src/status/server.ts";
import { fakeSource } from "./fixtures/status/fake-run.ts";

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
    const stepper = setInterval(() => run.step(), 150);
    const profile = join(dir, "profile");
    const proc = Bun.spawn(
      [
        chromium!,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "--window-size=1000,900",
        `${status.url}#token=${TOKEN}`,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    let client: Awaited<ReturnType<typeof cdp>> | undefined;
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
        wsUrl = list.find((t) => t.type === "page" && t.url.startsWith(status.url))?.webSocketDebuggerUrl;
        if (!wsUrl) await Bun.sleep(100);
      }
      client = await cdp(wsUrl);
      const read = async (): Promise<PageState> => {
        const r = (await client!.send("Runtime.evaluate", { expression: READ_PAGE, returnByValue: true })) as { result: { value?: string } };
        return JSON.parse(r.result.value ?? "null") ?? { points: 0 };
      };
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

      if (process.env.ANYPERF_SCREENSHOT) {
        const shot = (await client.send("Page.captureScreenshot", { format: "png" })) as { data: string };
        writeFileSync(process.env.ANYPERF_SCREENSHOT, Buffer.from(shot.data, "base64"));
      }
      await client.send("Browser.close").catch(() => {});
    } finally {
      clearInterval(stepper);
      client?.close();
      const killer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      proc.kill();
      await proc.exited;
      clearTimeout(killer);
      await status.stop();
    }
  },
  60_000,
);

test.skipIf(!chromium)("without the token the page says how to pass it", async () => {
  const { source } = fakeSource({ intervals: 5 });
  const status = startStatusServer({ host: "127.0.0.1", port: 0, token: TOKEN }, source);
  const proc = Bun.spawn(
    [
      chromium!,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${join(dir, "profile2")}`,
      "--virtual-time-budget=3000",
      "--dump-dom",
      status.url,
    ],
    { stdout: "pipe", stderr: "ignore" },
  );
  const killer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  try {
    const dom = await new Response(proc.stdout).text();
    expect(dom).toContain("This status server needs its token: open /#token=TOKEN");
  } finally {
    clearTimeout(killer);
    proc.kill();
    await proc.exited;
    await status.stop();
  }
}, 40_000);
