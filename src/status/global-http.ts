import { UserError } from "../errors.ts";
import { onRunStarted } from "../engine/registry.ts";
import { parseHttpOption } from "./http-option.ts";
import { serverPolicy } from "../access/server-policy.ts";

/**
 * `--http [ADDR:]PORT` and `--http-token TOKEN` are global: taken out of argv before a mode parses it, so every mode
 * and dialect gets the status endpoint, fed by every TestRun the process starts.
 */
export function takeHttpOptions(argv: string[]): { rest: string[]; http?: string; token?: string } {
  const rest: string[] = [];
  let http: string | undefined, token: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [name, inline] = a.startsWith("--http") && a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
    if (name !== "--http" && name !== "--http-token") {
      rest.push(a);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UserError(`${name} needs a value: ${name === "--http" ? "--http 8080 or --http 127.0.0.1:8080" : "--http-token TOKEN"}`, 2);
    if (name === "--http") http = value;
    else token = value;
  }
  if (token !== undefined && http === undefined) throw new UserError("--http-token without --http: add --http [ADDR:]PORT", 2);
  return { rest, http, token };
}

/** Starts the endpoint for this process; Hono is loaded only here. Returns how to stop it. */
export async function startGlobalStatus(opts: { http: string; token?: string; mode: string; role: string; persistent: boolean }): Promise<() => Promise<void>> {
  const listen = parseHttpOption(opts.http);
  const status = await import("./server.ts");
  const source = new status.TestRunSource({ mode: opts.mode, role: opts.role, persistent: opts.persistent });
  const server = status.startStatusServer({ ...listen, token: opts.token, allow: serverPolicy().allow }, source);
  const off = onRunStarted((run) => source.add(run));
  console.error(`status: ${server.url}`);
  return async () => {
    off();
    await server.stop();
    source.close();
  };
}
