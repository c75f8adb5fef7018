import type { Snapshot } from "../../src/counters.ts";
import type { DataPlane } from "../../src/engine/data-plane.ts";

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/** Resolves when `test` is true of a fresh snapshot (polled; the data plane reports accepts only through counters). */
export async function until(plane: DataPlane, test: (s: Snapshot) => boolean, signal: AbortSignal): Promise<boolean> {
  while (!signal.aborted) {
    if (test(plane.snapshot())) return true;
    await sleep(2, signal);
  }
  return false;
}
