/**
 * Send buffers, one per size and fill byte on each Worker: a payload is only ever read, so thousands of streams on
 * one Worker share it rather than each holding its own (128 KiB × 10,000 flows would be 1.3 GB).
 */
const filled = new Map<string, Uint8Array>();

export function filledPayload(size: number, fill: number): Uint8Array {
  const key = `${size}:${fill}`;
  let b = filled.get(key);
  if (!b) filled.set(key, (b = new Uint8Array(size).fill(fill)));
  return b;
}
