/**
 * Runs one fuzz target in a Worker, so the runner on the main thread can terminate it when a call never returns (a
 * synchronous loop cannot be interrupted from inside its own thread, and bun test's timeout does not stop it).
 */
import { armWatch, type FuzzTarget, type RunOptions, type RunReport } from "./harness.ts";

export interface WorkerRequest extends RunOptions {
  module: string;
  watch: SharedArrayBuffer;
}

export type WorkerReply = { ok: true; report: RunReport } | { ok: false; error: string };

declare const self: Worker;

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const req = e.data;
  let reply: WorkerReply;
  try {
    armWatch(req.watch);
    const mod = (await import(req.module)) as { targets?: Record<string, FuzzTarget> };
    const target = mod.targets?.[req.target];
    if (!target) throw new Error(`${req.module} exports no target "${req.target}"`);
    reply = { ok: true, report: await target.run(req) };
  } catch (err) {
    reply = { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ""}` : String(err) };
  }
  postMessage(reply);
};
