import { loadNet } from "../../src/net/net.ts";
import type { Net } from "../../src/net/types.ts";
import type { EmbedOptions, ServerHandle } from "../../src/net/server-handle.ts";
import { loadHandOff } from "../../src/net/hand-off.ts";
import { ServerPlan } from "./plan.ts";
import { Printer } from "./printer.ts";
import { Ids, TcpServer } from "./tcp-server.ts";
import { UdpServer } from "./udp-server.ts";

/**
 * `iperf -s` and `iperf -s -u` on one port number inside another process, numbering transfers in one sequence.
 * `tcpNet`: where TCP connections come from when the port is shared with another server (serve's port mux).
 */
export async function startIperf2Server(o: EmbedOptions & { tcpNet?: Net }): Promise<ServerHandle> {
  const [net, handOff] = await Promise.all([loadNet(), loadHandOff()]);
  const stop = new AbortController();
  const io = { net, sockopt: handOff.sockopt, handOff, printer: new Printer(o.sink, false), signal: stop.signal, warn: (t: string) => o.sink(`anyperf iperf: ${t}\n`) };
  // No address: both families on one socket ("::"), as iperf3's server listens, so a -V client is served too.
  const bind = o.host === undefined ? undefined : { host: o.host };
  const ipv6 = o.host === undefined;
  const ids = new Ids();
  const tcp = new TcpServer(ServerPlan.parse({ role: "server", port: o.port, bind, ipv6 }), { ...io, net: o.tcpNet ?? net }, ids, o.policy);
  tcp.start();
  const udp = new UdpServer(ServerPlan.parse({ role: "server", port: o.port, bind, ipv6, udp: true }), io, ids, o.policy);
  try {
    await udp.start();
  } catch (e) {
    await tcp.stop();
    throw e;
  }
  return {
    port: o.port,
    close: async () => {
      stop.abort();
      await Promise.all([tcp.done, udp.done]);
    },
  };
}
