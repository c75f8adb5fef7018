import { UserError } from "../errors.ts";
import { onRunResults, onRunStarted } from "../engine/registry.ts";
import { parseHttpOption } from "./http-option.ts";
import { serverPolicy } from "../access/server-policy.ts";
import { resolveToken } from "../access/secret.ts";
import { getProcessLabels } from "../fleet/labels.ts";
import { enableStartRoute } from "./readiness.ts";

/**
 * `--http [ADDR:]PORT`, `--http-token TOKEN` (or `--http-token-file FILE`, or ANYPERF_HTTP_TOKEN) and
 * `--linger SECONDS` are global: taken out of argv before a mode parses
 * it, so every mode and dialect gets the status endpoint, fed by every TestRun the process starts.
 */
export function takeHttpOptions(argv: string[], env: Record<string, string | undefined> = {}): { rest: string[]; http?: string; token?: string; lingerS?: number } {
  const rest: string[] = [];
  let http: string | undefined, token: string | undefined, tokenFile: string | undefined, linger: string | undefined;
  const names = ["--http", "--http-token", "--http-token-file", "--linger"];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf("=");
    const [name, inline] = a.startsWith("--") && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    if (!names.includes(name)) {
      rest.push(a);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) {
      const example = { "--http": "--http 8080 or --http 127.0.0.1:8080", "--http-token": "--http-token TOKEN", "--http-token-file": "--http-token-file FILE", "--linger": "--linger 60" }[name];
      throw new UserError(`${name} needs a value: ${example}`, 2);
    }
    if (name === "--http") http = value;
    else if (name === "--http-token") token = value;
    else if (name === "--http-token-file") tokenFile = value;
    else linger = value;
  }
  if ((token ?? tokenFile) !== undefined && http === undefined) throw new UserError(`${token !== undefined ? "--http-token" : "--http-token-file"} without --http: add --http [ADDR:]PORT`, 2);
  if (linger !== undefined && http === undefined) throw new UserError("--linger without --http: add --http [ADDR:]PORT", 2);
  // The variable alone never turns the endpoint on: a pod may set it for containers that serve no status.
  if (http === undefined) return { rest };
  const resolved = resolveToken({ flag: "--http-token", value: token, file: tokenFile, envName: "ANYPERF_HTTP_TOKEN", env });
  return { rest, http, token: resolved, lingerS: linger === undefined ? undefined : lingerSeconds(linger) };
}

/** Longest --linger: a day, like the longest test. */
const MAX_LINGER_S = 86_400;

function lingerSeconds(text: string): number {
  const s = Number(text);
  if (text.trim() === "" || !Number.isFinite(s) || s < 0 || s > MAX_LINGER_S) {
    throw new UserError(`--linger ${text}: must be seconds from 0 to ${MAX_LINGER_S}; see --help`, 2);
  }
  return s;
}

/**
 * How long the endpoint of a finished client run stays up for /results: --linger, else 30 s at a terminal (time to
 * open the page or run curl) and 5 s for a script, which polls as the run ends.
 */
export function lingerMs(lingerS: number | undefined, interactive = process.stderr.isTTY === true): number {
  return (lingerS ?? (interactive ? 30 : 5)) * 1000;
}

/** Starts the endpoint for this process; Hono is loaded only here. Returns how to stop it. */
export interface GlobalStatus {
  /** Keeps the endpoint up `ms` after the run, or until `signal` (Ctrl+C) aborts. */
  linger(ms: number, signal: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export async function startGlobalStatus(opts: { http: string; token?: string; mode: string; role: string; persistent: boolean }): Promise<GlobalStatus> {
  const listen = parseHttpOption(opts.http);
  const status = await import("./server.ts");
  const source = new status.TestRunSource({ mode: opts.mode, role: opts.role, persistent: opts.persistent, labels: getProcessLabels() });
  const server = status.startStatusServer({ ...listen, token: opts.token, allow: serverPolicy().allow }, source);
  const offStarted = onRunStarted((run) => source.add(run));
  const offResults = onRunResults((run, results) => source.setResults(run, results));
  const off = () => {
    offStarted();
    offResults();
  };
  enableStartRoute();
  console.error(`status: ${server.url}`);
  return {
    async linger(ms: number, signal: AbortSignal): Promise<void> {
      if (ms <= 0 || signal.aborted) return;
      console.error(`status: results stay at ${server.url}results for ${ms / 1000} s (--linger S sets it; Ctrl+C ends it now)`);
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), signal.removeEventListener("abort", done), resolve());
        const timer = setTimeout(done, ms);
        signal.addEventListener("abort", done);
      });
    },
    async stop(): Promise<void> {
      off();
      await server.stop();
      source.close();
    },
  };
}
