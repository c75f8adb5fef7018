import { readFileSync } from "node:fs";

/**
 * A status endpoint that only answers: the same recorded /status document every time, in a process of its own
 * (`bun bench/stand-in.ts HOST PORT`), as anyperf's endpoint lives in anyperf's process. Polling it costs what
 * polling costs on this machine (the poller's and a server's wake-ups on cores the test keeps busy), so the /status
 * row can tell that apart from what anyperf's own endpoint adds.
 */

/** The recorded document (testdata: the command on the first line, the body below). */
export function standInDocument(): string {
  const text = readFileSync(new URL("./testdata/status-document.json.txt", import.meta.url), "utf8");
  return text.slice(text.indexOf("\n") + 1).trimEnd();
}

/** The command that serves the stand-in on host:port until it is signalled. */
export function standInArgv(host: string, port: number): string[] {
  return [process.execPath, new URL(import.meta.url).pathname, host, String(port)];
}

if (import.meta.main) {
  const [host, port] = process.argv.slice(2);
  if (!host || !port) throw new Error("usage: bun bench/stand-in.ts HOST PORT");
  const body = standInDocument();
  Bun.serve({
    hostname: host,
    port: Number(port),
    fetch: () => new Response(body, { headers: { "Content-Type": "application/json", "Cache-Control": "no-store" } }),
  });
}
