import { readlinkSync } from "node:fs";
import { release } from "node:os";
import { basename } from "node:path";
import { isIP } from "node:net";
import { z } from "zod";
import { readIfPresent, readLink } from "../host/link.ts";

/** What a tuning article's "test record" notes about the host: what a run's figures depend on beyond its options. */
export const HostFacts = z.object({
  kernel: z.string().optional(),
  cpu_model: z.string().optional(),
  interface: z.string().optional(),
  nic_driver: z.string().optional(),
  link_speed_bps: z.number().optional(),
  mtu: z.number().optional(),
  sysctls: z.record(z.string(), z.string()).default({}),
});
export type HostFacts = z.infer<typeof HostFacts>;

const SYSCTLS = ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control", "net.core.rmem_max", "net.core.wmem_max"];

/** Reads them now (Linux /proc and /sys; elsewhere what is absent stays absent). `peer`: an IP address or a name. */
export function readHostFacts(peer: string, root = { proc: "/proc", sys: "/sys" }): HostFacts {
  const facts: HostFacts = { kernel: release(), sysctls: {} };
  const model = /^model name\s*:\s*(.+)$/m.exec(readIfPresent(`${root.proc}/cpuinfo`) ?? "")?.[1]?.trim();
  if (model) facts.cpu_model = model;
  for (const name of SYSCTLS) {
    const v = readIfPresent(`${root.proc}/sys/${name.replaceAll(".", "/")}`);
    if (v !== undefined) facts.sysctls[name] = v.trim().replace(/\s+/g, " ");
  }
  // A host name is not resolved here: the route table needs an address, and a lookup would add a network step.
  if (isIP(peer) === 0) return facts;
  const link = readLink(peer, root);
  if (link.interface !== undefined) {
    facts.interface = link.interface;
    try {
      facts.nic_driver = basename(readlinkSync(`${root.sys}/class/net/${link.interface}/device/driver`));
    } catch {
      // virtual and loopback devices have no driver link
    }
  }
  if (link.speed_bps !== undefined) facts.link_speed_bps = link.speed_bps;
  if (link.mtu !== undefined) facts.mtu = link.mtu;
  return facts;
}
