import { isMainThread } from "node:worker_threads";
import { loadSockopt } from "../sockopt/sockopt.ts";
import { localNet } from "./local-hand-off.ts";
import type { Net } from "./types.ts";

let mainNet: Promise<Net> | undefined;

/**
 * Bun's native sockets where available (the fast path), else the node-compatible adapter (Deno, Node). On the main
 * thread of a process whose sockets cannot cross threads, its sockets route their events for local hand-off.
 */
export function loadNet(): Promise<Net> {
  if (!isMainThread) return baseNet();
  mainNet ??= (async () => ((await handOffIsLocal()) ? localNet(await baseNet()) : baseNet()))();
  return mainNet;
}

async function baseNet(): Promise<Net> {
  if (typeof Bun !== "undefined") return (await import("./bun.ts")).bunNet;
  return (await import("./node.ts")).nodeNet;
}

/**
 * Whether a socket the main thread accepted stays there for the streams (src/net/local-hand-off.ts) instead of
 * moving to a Worker as a dup()ed fd: without libc through bun:ffi (Windows, macOS, musl, Deno), or when
 * ANYPERF_LOCAL_HAND_OFF=1 asks for that path on Linux (to compare or to test it).
 */
export async function handOffIsLocal(): Promise<boolean> {
  return process.env.ANYPERF_LOCAL_HAND_OFF === "1" || (await loadSockopt()) === undefined;
}
