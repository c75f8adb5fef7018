import { expect, test } from "bun:test";
import { z } from "zod";
import { parseWithoutCompiling } from "./zod-config.ts";

test("parseWithoutCompiling turns zod's schema compiler off, and parsing still validates", () => {
  const before = z.config().jitless;
  try {
    parseWithoutCompiling();
    expect(z.config().jitless).toBe(true);
    const S = z.object({ port: z.number().int().min(1).max(65535) });
    expect(S.parse({ port: 5201 })).toEqual({ port: 5201 });
    expect(S.safeParse({ port: 70000 }).success).toBe(false);
  } finally {
    z.config({ jitless: before });
  }
});
