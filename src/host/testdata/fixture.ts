import { readFileSync } from "node:fs";

/** A fixture text from src/host/testdata (captured from this machine's /proc or written by hand). */
export function fixture(name: string): string {
  return readFileSync(new URL(name, import.meta.url), "latin1");
}
