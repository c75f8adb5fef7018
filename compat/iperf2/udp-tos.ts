import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import { applyAsked } from "./apply-asked.ts";

/**
 * The TOS each flow's client asked for (its -S, in the header) on our one UDP socket. A stock server sets it on the
 * flow's own connected socket; ours serves every flow from one socket, so the socket carries the TOS of the flow it
 * last opened or sent for: set when a flow opens and before each datagram we send for one (its report, -R traffic),
 * read back each time it changes (a system call only then). A TOS the kernel refused is said once and not retried.
 */
export class SharedSocketTos {
  private current = 0;
  private readonly refused = new Set<number>();

  constructor(
    private readonly io: { sockopt: Sockopt | undefined; warn(text: string): void },
    private readonly fd: () => number | undefined,
  ) {}

  use(tos: number): void {
    if (tos === this.current || this.refused.has(tos)) return;
    if (applyAsked(this.io, this.fd(), { tos }, `TOS 0x${tos.toString(16)}`)) this.current = tos;
    else this.refused.add(tos);
  }
}
