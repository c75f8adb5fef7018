import type { ServerHandle } from "../../src/net/server-handle.ts";

/**
 * Longest serve waits for one server to close after the signal. Each server prints what its running tests measured
 * within milliseconds of close(); one whose close() never settles must not keep the process running after the one
 * Ctrl+C the user gave (that once took a SIGKILL), so serve names it and exits without it.
 */
const CLOSE_MS = 5_000;

/** Closes `handle`, at most `ms`: then it says so on stderr and resolves; a close() that throws still throws. */
export async function closeWithin(who: string, handle: ServerHandle, ms = CLOSE_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), ms)));
  const r = await Promise.race([handle.close().then(() => "closed" as const), late]);
  clearTimeout(timer);
  if (r === "late") console.error(`anyperf serve: the ${who} server did not close within ${ms / 1000} s of the signal; exiting without it`);
}
