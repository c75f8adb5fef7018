import type { Cidr } from "../access/cidr.ts";
import { addressAllowed } from "../access/cidr.ts";
import { RefusalLog } from "../access/refusal-log.ts";
import { peerText } from "../access/peer-text.ts";

/**
 * A listening stream's share of `--allow`, applied where the Worker accepts connections or reads datagrams itself
 * (ntttcp data ports). Refusals are logged rate-limited; the last admitted address is remembered so a datagram
 * flood from an allowed peer costs one string compare each.
 */
export class PeerFilter {
  private lastAdmitted: string | undefined;
  private readonly log: RefusalLog;

  constructor(private readonly allow: readonly Cidr[], write: (line: string) => void) {
    this.log = new RefusalLog(write);
  }

  admits(address: string | undefined, port?: number): boolean {
    if (address !== undefined && address === this.lastAdmitted) return true;
    if (address !== undefined && addressAllowed(this.allow, address)) {
      this.lastAdmitted = address;
      return true;
    }
    this.log.refused(`anyperf: refused ${peerText(address, port)} on a data port: not in --allow`);
    return false;
  }
}
