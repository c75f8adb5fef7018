import { constants } from "node:os";

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
