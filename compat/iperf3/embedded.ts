import { loadNet } from "../../src/net/net.ts";
import type { EmbedOptions, ServerHandle } from "../../src/net/server-handle.ts";
import { loadFdTools } from "./fd-tools.ts";
import { Output } from "./output.ts";
import { ServerPlan } from "./plan.ts";
import { Iperf3Server } from "./server.ts";

/** `iperf3 -s -p PORT [-B HOST]` inside another process: many clients at once, until close(). */
export async function startIperf3Server(o: EmbedOptions, auth?: ServerPlan["auth"]): Promise<ServerHandle> {
  const [net, fd] = await Promise.all([loadNet(), loadFdTools()]);
  const plan = ServerPlan.parse({ role: "server", port: o.port, bind: o.host, auth });
  const server = new Iperf3Server(plan, new Output({ write: o.sink }), net, fd, o.policy);
  server.start();
  return {
    port: plan.port,
    close: async () => {
      // Running tests are told the server ended (SERVER_TERMINATE) and print what they measured.
      server.terminate();
      await server.done;
    },
  };
}
