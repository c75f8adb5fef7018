/**
 * The iperf3 test cookie: 36 characters from a base-32 alphabet plus a NUL, 37 bytes on the wire
 * (docs/protocols/iperf3.md §2.1). It is the first thing on the control connection and on every TCP data connection; a
 * server serving many tests at once matches data connections to tests by it.
 */

export const COOKIE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
export const COOKIE_CHARS = 36;
export const COOKIE_BYTES = COOKIE_CHARS + 1;

const ALLOWED = new Uint8Array(256);
for (const ch of COOKIE_ALPHABET) ALLOWED[ch.charCodeAt(0)] = 1;

/** A new random cookie; `random` fills a byte array (crypto by default, injectable for tests). */
export function generateCookie(random: (bytes: Uint8Array) => void = (b) => crypto.getRandomValues(b)): string {
  const bytes = new Uint8Array(COOKIE_CHARS);
  random(bytes);
  let out = "";
  // 256 is a multiple of 32, so taking the low 5 bits keeps every character equally likely.
  for (const b of bytes) out += COOKIE_ALPHABET[b & 31];
  return out;
}

export function encodeCookie(cookie: string): Uint8Array {
  if (!isCookieString(cookie)) throw new RangeError(`not an iperf3 cookie: ${JSON.stringify(cookie)}`);
  const out = new Uint8Array(COOKIE_BYTES);
  for (let i = 0; i < COOKIE_CHARS; i++) out[i] = cookie.charCodeAt(i);
  return out;
}

export function isCookieString(s: string): boolean {
  if (s.length !== COOKIE_CHARS) return false;
  for (let i = 0; i < COOKIE_CHARS; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff || !ALLOWED[c]) return false;
  }
  return true;
}

export type CookieCheck = { ok: true; cookie: string } | { ok: false; reason: string };

/**
 * Validates 37 received bytes. The stock server only compares them as a C string; we insist on the exact shape so a
 * stray connection (a port scanner, an HTTP request) is told apart from a client at once.
 */
export function decodeCookie(bytes: Uint8Array): CookieCheck {
  if (bytes.length !== COOKIE_BYTES) return { ok: false, reason: `cookie must be ${COOKIE_BYTES} bytes, got ${bytes.length}` };
  if (bytes[COOKIE_CHARS] !== 0) return { ok: false, reason: "cookie is not NUL-terminated" };
  let s = "";
  for (let i = 0; i < COOKIE_CHARS; i++) {
    const b = bytes[i]!;
    if (!ALLOWED[b]) return { ok: false, reason: `cookie byte ${i} (0x${b.toString(16).padStart(2, "0")}) is outside the iperf3 alphabet` };
    s += String.fromCharCode(b);
  }
  return { ok: true, cookie: s };
}
