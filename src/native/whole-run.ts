import { lossPercent, concurrentSum } from "../formulas.ts";
import type { Plan } from "../plan.ts";
import type { Figures, HostResult } from "../report/result.ts";

/**
 * The whole run's figures from its servers' own (each measured by that server over the common window): counts summed,
 * rates by concurrentSum, loss over every datagram; `seconds` is the common window's. Servers without figures (failed)
 * are left out.
 */
export function wholeRun(hosts: readonly HostResult[], seconds: number, plan: Pick<Plan, "transport" | "test">): Figures {
  const parts = hosts.flatMap((h) => (h.summary ? [h.summary] : []));
  const sum = (k: "bytes" | "packets" | "lost" | "transactions" | "retransmits" | "out_of_order" | "send_errors") => {
    const have = parts.filter((p) => p[k] !== undefined);
    return have.length ? have.reduce((a, p) => a + p[k]!, 0) : undefined;
  };
  const rate = (k: "throughput_bps" | "packets_per_second" | "transactions_per_second") => (parts.some((p) => p[k] !== undefined) ? concurrentSum(parts.map((p) => p[k] ?? 0)) : undefined);
  const optional = { packets: sum("packets"), packets_per_second: rate("packets_per_second"), out_of_order: sum("out_of_order"), send_errors: sum("send_errors"), transactions: sum("transactions"), transactions_per_second: rate("transactions_per_second"), retransmits: sum("retransmits") };
  const present = Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)) as Partial<typeof optional>;
  const f: Figures = { bytes: sum("bytes") ?? 0, seconds, throughput_bps: rate("throughput_bps") ?? 0, ...present };
  const lost = sum("lost");
  if (plan.transport === "udp" && lost !== undefined) {
    f.lost = lost;
    f.loss_percent = lossPercent(lost, (f.packets ?? 0) + lost);
  }
  return f;
}
