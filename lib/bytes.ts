/** Byte helpers shared by codecs, capture readers and tests; pure, no runtime API (Buffer is not in every runtime's globals). */

/** One new array holding `parts` back to back; the parts are copied, never aliased. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
