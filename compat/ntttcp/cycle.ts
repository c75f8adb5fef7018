import type { NtttcpPlan } from "./plan.ts";

/**
 * A side's phases within a Linux sync cycle (docs/protocols/ntttcp-linux.md §4.3, §6): the cycle is negotiated as one
 * number (max of the sender's W+t+C and the receiver's t; 0 = continuous); each side applies its own W locally,
 * measures at most t, and spends the rest of the cycle cooling down. Without a negotiated cycle the plan's W, t, C
 * apply.
 */
export function cycleTiming(p: Pick<NtttcpPlan, "warmup" | "duration" | "cooldown">, cycle: number | undefined) {
  if (cycle === undefined) return { warmupS: p.warmup, durationS: p.duration, cooldownS: p.cooldown };
  if (cycle === 0) return { warmupS: p.warmup, durationS: 0, cooldownS: 0 };
  const warmupS = Math.min(p.warmup, cycle);
  const durationS = p.duration === 0 ? 0 : Math.min(p.duration, cycle - warmupS);
  return { warmupS, durationS, cooldownS: Math.max(0, cycle - warmupS - durationS) };
}
