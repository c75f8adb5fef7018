import type { DataPlane } from "../../src/engine/data-plane.ts";

/**
 * Stops every stream of a plane that has not ended and waits for them, at most `limitMs`. DataPlane.stop() leaves
 * its 15 s guard timer pending, which keeps a finished client process alive for 15 s; this clears its own.
 */
export async function stopPlane(plane: DataPlane, limitMs = 15_000): Promise<void> {
  for (let i = 0; i < plane.size; i++) if (!plane.ends[i]) plane.stopStream(i);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([plane.ended, new Promise<void>((r) => (timer = setTimeout(r, limitMs)))]);
  clearTimeout(timer);
  if (plane.ends.some((e) => e === undefined)) await plane.stop();
}
