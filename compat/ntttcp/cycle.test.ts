import { expect, test } from "bun:test";
import { cycleTiming } from "./cycle.ts";

test("no negotiation: the plan's own phases", () => {
  expect(cycleTiming({ warmup: 1, duration: 5, cooldown: 2 }, undefined)).toEqual({ warmupS: 1, durationS: 5, cooldownS: 2 });
});

test("sender W1 t2 C1 against a receiver -t 2: cycle 4, the receiver measures 2 and cools down 2", () => {
  expect(cycleTiming({ warmup: 0, duration: 2, cooldown: 0 }, 4)).toEqual({ warmupS: 0, durationS: 2, cooldownS: 2 });
  expect(cycleTiming({ warmup: 1, duration: 2, cooldown: 1 }, 4)).toEqual({ warmupS: 1, durationS: 2, cooldownS: 1 });
});

test("receiver -W 1 -t 3 with a cycle of 3 measures only 2 s (its W is not negotiated)", () => {
  expect(cycleTiming({ warmup: 1, duration: 3, cooldown: 0 }, 3)).toEqual({ warmupS: 1, durationS: 2, cooldownS: 0 });
});

test("a larger cycle from the peer lengthens the cool-down, not the measurement", () => {
  expect(cycleTiming({ warmup: 0, duration: 3, cooldown: 0 }, 10)).toEqual({ warmupS: 0, durationS: 3, cooldownS: 7 });
});

test("cycle 0 is continuous: measure until stopped", () => {
  expect(cycleTiming({ warmup: 2, duration: 3, cooldown: 1 }, 0)).toEqual({ warmupS: 2, durationS: 0, cooldownS: 0 });
});
