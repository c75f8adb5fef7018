import { readFileSync } from "node:fs";
import { ProcFile } from "../../src/host/proc-file.ts";
import { packetsPerSecond, utilizationPercent } from "../../src/formulas.ts";
import { sprintf } from "./printf.ts";

/**
 * NIC packet rates from /proc/net/dev while a UDP_STREAM test is received, printed the way `sar -n DEV 2` does
 * (one block every 2 s, then an Average block), so a pps test reads the wire rate next to netperf's own counts.
 */

interface DevCounters {
  rxPackets: number;
  txPackets: number;
  rxBytes: number;
  txBytes: number;
  rxCompressed: number;
  txCompressed: number;
  rxMulticast: number;
}

/** The /proc/net/dev columns sar uses, per interface. */
export function parseDevCounters(text: string): Map<string, DevCounters> {
  const out = new Map<string, DevCounters>();
  for (const line of text.split("\n")) {
    if (line.includes("|")) continue;
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (f.length < 16 || f.some((v) => !Number.isFinite(v))) continue;
    out.set(line.slice(0, colon).trim(), {
      rxBytes: f[0]!,
      rxPackets: f[1]!,
      rxCompressed: f[6]!,
      rxMulticast: f[7]!,
      txBytes: f[8]!,
      txPackets: f[9]!,
      txCompressed: f[15]!,
    });
  }
  return out;
}

function speedMbps(iface: string): number {
  try {
    const v = Number(readFileSync(`/sys/class/net/${iface}/speed`, "utf8").trim());
    return Number.isFinite(v) && v > 0 ? v : 0;
  } catch {
    return 0;
  }
}

const HEADER = "    IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil\n";

/** sar's %ifutil: the busier direction's bits against the link speed (full duplex). */
function ifutil(rxBytesPerS: number, txBytesPerS: number, mbps: number): number {
  return utilizationPercent(Math.max(rxBytesPerS, txBytesPerS) * 8, mbps * 1e6);
}

export function sarBlock(label: string, a: Map<string, DevCounters>, b: Map<string, DevCounters>, seconds: number, speeds: (iface: string) => number): string {
  let out = `\n${label.padEnd(11)}${HEADER}`;
  for (const [iface, end] of b) {
    const start = a.get(iface);
    if (!start) continue;
    const r = (k: keyof DevCounters) => packetsPerSecond(Math.max(0, end[k] - start[k]), seconds);
    out += sprintf(
      "%-11s%9s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n",
      label,
      iface,
      r("rxPackets"),
      r("txPackets"),
      r("rxBytes") / 1024,
      r("txBytes") / 1024,
      r("rxCompressed"),
      r("txCompressed"),
      r("rxMulticast"),
      ifutil(r("rxBytes"), r("txBytes"), speeds(iface)),
    );
  }
  return out;
}

export class NicRateReporter {
  private readonly file = ProcFile.open("/proc/net/dev");
  private readonly first: { at: number; c: Map<string, DevCounters> } | undefined;
  private last: { at: number; c: Map<string, DevCounters> } | undefined;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private readonly speeds = new Map<string, number>();

  constructor(
    private readonly print: (text: string) => void,
    intervalMs = 2000,
  ) {
    this.first = this.sample();
    this.last = this.first;
    if (this.first) this.timer = setInterval(() => this.tick(), intervalMs);
  }

  private sample(): { at: number; c: Map<string, DevCounters> } | undefined {
    const text = this.file?.read();
    return text === undefined ? undefined : { at: performance.now(), c: parseDevCounters(text) };
  }

  private speed = (iface: string): number => {
    let v = this.speeds.get(iface);
    if (v === undefined) this.speeds.set(iface, (v = speedMbps(iface)));
    return v;
  };

  private tick(): void {
    const now = this.sample();
    if (!now || !this.last) return;
    const clock = new Date().toTimeString().slice(0, 8);
    this.print(sarBlock(clock, this.last.c, now.c, (now.at - this.last.at) / 1000, this.speed));
    this.last = now;
  }

  finish(): void {
    if (this.timer) clearInterval(this.timer);
    const now = this.sample();
    if (this.first && now && now.at - this.first.at > 0) this.print(sarBlock("Average:", this.first.c, now.c, (now.at - this.first.at) / 1000, this.speed));
    this.file?.close();
  }
}
