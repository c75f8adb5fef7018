import { expect, test } from "bun:test";
import { RefusalLog } from "./refusal-log.ts";

test("a flood prints a few lines and one summary per window", () => {
  let now = 0;
  const lines: string[] = [];
  const log = new RefusalLog((l) => lines.push(l), { perWindow: 3, windowMs: 1000, now: () => now });
  for (let i = 0; i < 1000; i++) log.refused(`refused ${i}`);
  expect(lines).toEqual(["refused 0", "refused 1", "refused 2"]);
  now = 1000;
  log.refused("refused late");
  expect(lines.slice(3)).toEqual(["... and 997 more refused connections in 1 s", "refused late"]);
});

test("the summary comes on its own when the flood stops", async () => {
  const lines: string[] = [];
  const log = new RefusalLog((l) => lines.push(l), { perWindow: 1, windowMs: 30 });
  log.refused("a");
  log.refused("b");
  expect(lines).toEqual(["a"]);
  await Bun.sleep(60);
  expect(lines).toEqual(["a", "... and 1 more refused connection in 0.03 s"]);
});
