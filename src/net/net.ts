import type { Net } from "./types.ts";

/** Bun's native sockets where available (the fast path), else the node-compatible adapter (Deno, Node). */
export async function loadNet(): Promise<Net> {
  if (typeof Bun !== "undefined") return (await import("./bun.ts")).bunNet;
  return (await import("./node.ts")).nodeNet;
}
