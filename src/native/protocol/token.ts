import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares a token a peer sent with ours in time that does not depend on where they differ or on the sent length:
 * both are hashed to 32 bytes first, so a wrong token teaches nothing about the right one.
 */
export function tokensEqual(sent: string | undefined, expected: string): boolean {
  const a = createHash("sha256").update(sent ?? "").digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && sent !== undefined;
}
