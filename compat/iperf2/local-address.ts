import type { Net } from "../../src/net/types.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";

/**
 * The local address the kernel picks to reach `host`, for "local X port N connected with ..." lines when the data
 * socket itself lives in a Worker: a connected UDP socket (no packet is sent) tells it. Falls back to the wildcard.
 */
export async function localAddressToward(net: Net, sockopt: Sockopt | undefined, host: string): Promise<string> {
  const wildcard = host.includes(":") ? "::" : "0.0.0.0";
  if (!sockopt) return wildcard;
  try {
    const s = await net.udpSocket({ connect: { hostname: host, port: 9 }, socket: {} });
    const addr = s.fd !== undefined ? sockopt.localAddress(s.fd) : undefined;
    s.close();
    return addr?.host ?? wildcard;
  } catch {
    return wildcard;
  }
}
