import { constants } from "node:os";
import { getSystemErrorMap } from "node:util";

let names: Map<number, string> | undefined;

/** The symbolic name of a Linux errno ("ENOENT"), or "errno N" when the runtime does not know it. */
export function errnoName(errno: number): string {
  names ??= new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));
  return names.get(errno) ?? `errno ${errno}`;
}

/** A failed libc call, carrying `code` like Node's system errors so explainSocketError can read it. */
export class SyscallError extends Error {
  readonly code: string;
  constructor(
    readonly call: string,
    readonly errno: number,
  ) {
    const code = errnoName(errno);
    super(`${call} failed: ${code}`);
    this.name = "SyscallError";
    this.code = code;
  }
}

/**
 * What strerror(3) says for an error code ("ECONNRESET" → "Connection reset by peer"), for front ends that print a
 * peer tool's "write failed: ..." line; the runtime's table holds the same words, lower-cased.
 */
export function strerror(code: string): string {
  for (const [name, text] of getSystemErrorMap().values()) {
    if (name === code) return text.charAt(0).toUpperCase() + text.slice(1);
  }
  return code;
}
