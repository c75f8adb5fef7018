import type { Net } from "./types.ts";
import { familyOf } from "../sockopt/sockaddr.ts";

type UdpOptions = Parameters<Net["udpSocket"]>[0];

/**
 * Bun binds an unnamed UDP socket to 0.0.0.0, an IPv4 socket, so connecting it to an IPv6 peer fails with
 * EAFNOSUPPORT: a socket that is only told its peer is bound to the wildcard of the peer's family.
 */
export function udpBindFor(o: UdpOptions): UdpOptions {
  if (o.hostname !== undefined || o.fd !== undefined || !o.connect) return o;
  return familyOf(o.connect.hostname) === "ipv6" ? { ...o, hostname: "::" } : o;
}

// Bun's objects already have the shapes in types.ts; the casts only bridge Bun's wider generic signatures.
type Loose = (o: unknown) => never;
export const bunNet: Net = {
  connect: ((o: unknown) => Bun.connect(o as Parameters<typeof Bun.connect>[0])) as unknown as Loose,
  listen: ((o: unknown) => Bun.listen(o as Parameters<typeof Bun.listen>[0])) as unknown as Loose,
  udpSocket: ((o: UdpOptions) => Bun.udpSocket(udpBindFor(o) as Parameters<typeof Bun.udpSocket>[0])) as unknown as Loose,
};
