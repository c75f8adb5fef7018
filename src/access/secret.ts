import { readFileSync } from "node:fs";
import { UserError } from "../errors.ts";

/**
 * A token from argv, a file or the environment: argv is visible in the process list, so a fleet passes it by file
 * (a mounted Secret) or by variable. Two explicit sources at once are a mistake; the variable is only a fallback,
 * since a pod's environment is set for every container alike.
 */
export function readTokenFile(flag: string, file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UserError(`${flag} ${file}: ${(e as Error).message}; pass a readable file`, 2);
  }
  const token = text.split(/\r?\n/)[0]!.trim();
  if (token === "") throw new UserError(`${flag} ${file}: the first line is empty; put the token there`, 2);
  return token;
}

export function resolveToken(o: { flag: string; value?: string; file?: string; envName: string; env: Record<string, string | undefined> }): string | undefined {
  if (o.value !== undefined && o.file !== undefined) throw new UserError(`${o.flag} and ${o.flag}-file both given: pass one`, 2);
  if (o.value === "") throw new UserError(`${o.flag} '': an empty token; pass the token, or drop ${o.flag}`, 2);
  if (o.value !== undefined) return o.value;
  if (o.file !== undefined) return readTokenFile(`${o.flag}-file`, o.file);
  const fromEnv = o.env[o.envName]?.trim();
  return fromEnv === undefined || fromEnv === "" ? undefined : fromEnv;
}
