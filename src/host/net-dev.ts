/** Per-interface counters from /proc/net/dev (cumulative since the interface appeared). */
export interface NicCounters {
  rxBytes: number;
  rxPackets: number;
  rxErrs: number;
  rxDrop: number;
  txBytes: number;
  txPackets: number;
  txErrs: number;
  txDrop: number;
}

/**
 * Parses /proc/net/dev. The name ends at the first ':' (the kernel forbids ':' in interface names) and large
 * counters can touch it ("eth0:1234"), so split there rather than on whitespace.
 */
export function parseNetDev(text: string): Record<string, NicCounters> {
  const out: Record<string, NicCounters> = {};
  for (const line of text.split("\n")) {
    if (line.includes("|")) continue; // the two header lines
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (name === "" || f.length < 12 || f.slice(0, 12).some((v) => !Number.isFinite(v))) continue;
    const at = (i: number) => f[i] as number;
    out[name] = {
      rxBytes: at(0),
      rxPackets: at(1),
      rxErrs: at(2),
      rxDrop: at(3),
      txBytes: at(8),
      txPackets: at(9),
      txErrs: at(10),
      txDrop: at(11),
    };
  }
  return out;
}
