import { z } from "zod";

/**
 * Zod compiles an object schema into a function at its first parse. anyperf parses each schema a few times per test
 * (a plan, a peer's JSON, each stream's spec), so the compile is never repaid, and it sits between a client's request
 * and our first byte: StreamSpec's first parse takes 4.8–5.3 ms compiled and 2.4–3.4 ms without, and 1,000 parses
 * after it cost the same either way (docs/PERFORMANCE.md "First byte"). zod reads the setting as each schema is built:
 * call this before any module that builds one is loaded (main.ts does, before a mode's modules).
 */
export function parseWithoutCompiling(): void {
  z.config({ jitless: true });
}
