/**
 * iperf3's authentication (docs/protocols/iperf3.md §4, `authtoken`): the client RSA-encrypts "user: U\npwd:  P\nts:   T" with
 * the server's public key (OAEP since 3.17, PKCS#1 v1.5 before and with --use-pkcs1-padding) and sends it base64 in
 * the parameters' "authtoken"; the server decrypts it, checks the timestamp against its clock within the skew
 * threshold, and looks "user,sha256hex({user}password)" up in its authorized-users text. Pure: keys and the users
 * file arrive as bytes or text; node:crypto does the RSA and the hash (Bun and Deno both provide it).
 */
import { Buffer } from "node:buffer";
import { constants, createHash, privateDecrypt, publicEncrypt } from "node:crypto";
import { z } from "zod";

export const AuthPadding = z.enum(["oaep", "pkcs1"]);
export type AuthPadding = z.infer<typeof AuthPadding>;

export interface Credentials {
  username: string;
  password: string;
  /** Seconds since the epoch when the client made the token. */
  tsS: number;
}

/** What the server side needs to check a token. */
export interface ServerAuth {
  privateKeyPem: string;
  padding: AuthPadding;
  /** Largest |server clock - token time| accepted, seconds (3.x default 10). */
  skewS: number;
}

export const DEFAULT_SKEW_S = 10;

const PADDING: Record<AuthPadding, number> = { oaep: constants.RSA_PKCS1_OAEP_PADDING, pkcs1: constants.RSA_PKCS1_PADDING };

/** The token the parameters carry. Throws on a key node:crypto cannot read or a text longer than the key allows. */
export function encodeAuthToken(c: Credentials, publicKeyPem: string, padding: AuthPadding): string {
  const text = `user: ${c.username}\npwd:  ${c.password}\nts:   ${Math.trunc(c.tsS)}`;
  return publicEncrypt({ key: publicKeyPem, padding: PADDING[padding] }, new TextEncoder().encode(text)).toString("base64");
}

// As the stock server's sscanf reads it: the name and password are single words (%s), the time a signed integer.
const TOKEN_TEXT = /^user: (\S+)\s+pwd: +(\S+)\s+ts: +([+-]?\d+)/;

/** The credentials inside a token, or undefined when it does not decrypt or does not hold the three fields. */
export function decodeAuthToken(token: string, privateKeyPem: string, padding: AuthPadding): Credentials | undefined {
  let plain: Uint8Array | undefined;
  try {
    const sealed = Buffer.from(token, "base64");
    // Bun and Node refuse PKCS#1 v1.5 private decryption (the Marvin timing attack, CVE-2023-46809), but 3.12-3.16
    // clients only speak it: the raw RSA result is unpadded here instead.
    plain = padding === "oaep" ? privateDecrypt({ key: privateKeyPem, padding: PADDING.oaep }, sealed) : unpadPkcs1(privateDecrypt({ key: privateKeyPem, padding: constants.RSA_NO_PADDING }, sealed));
  } catch {
    return undefined;
  }
  if (!plain) return undefined;
  const text = new TextDecoder().decode(plain);
  const m = TOKEN_TEXT.exec(text);
  return m ? { username: m[1]!, password: m[2]!, tsS: Number(m[3]) } : undefined;
}

/** The message inside an RSA block padded as PKCS#1 v1.5 type 2 (00 02, 8 or more non-zero bytes, 00, message). */
export function unpadPkcs1(block: Uint8Array): Uint8Array | undefined {
  if (block[0] !== 0 || block[1] !== 2) return undefined;
  const end = block.indexOf(0, 2);
  return end < 10 ? undefined : block.subarray(end + 1);
}

/** The hash an authorized-users line holds for this user and password. */
export function credentialHash(username: string, password: string): string {
  return createHash("sha256").update(`{${username}}${password}`).digest("hex");
}

/** Whether the users text ("user,hash" lines; # comments and lines without a comma skipped) admits these credentials. */
export function isAuthorizedUser(usersText: string, username: string, password: string): boolean {
  const hash = credentialHash(username, password);
  for (const raw of usersText.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (line.startsWith("#") || !line.includes(",")) continue;
    const [user, h] = line.split(",");
    if (user === username && h === hash) return true;
  }
  return false;
}

export type AuthVerdict = { ok: true; username: string } | { ok: false; reason: string };

/** The server's whole check of one test's token (absent when the client sent none). */
export function checkAuthToken(token: string | undefined, auth: ServerAuth, usersText: string, nowS: number): AuthVerdict {
  if (token === undefined) return { ok: false, reason: "the client sent no credentials" };
  const c = decodeAuthToken(token, auth.privateKeyPem, auth.padding);
  if (!c) return { ok: false, reason: `the token does not decrypt with ${auth.padding === "oaep" ? "OAEP" : "PKCS#1 v1.5"} padding` };
  if (Math.abs(nowS - c.tsS) > auth.skewS) return { ok: false, reason: `user '${c.username}': token time is ${nowS - c.tsS} s off this clock (threshold ${auth.skewS} s)` };
  if (!isAuthorizedUser(usersText, c.username, c.password)) return { ok: false, reason: `user '${c.username}': not in the authorized users file with this password` };
  return { ok: true, username: c.username };
}
