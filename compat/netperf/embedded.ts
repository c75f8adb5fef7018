import type { EmbedOptions, ServerHandle } from "../../src/net/server-handle.ts";
import { DEFAULT_MAX_TESTS } from "./netserver-args.ts";
import { NetserverPlan } from "./plan.ts";
import { NetserverServer } from "./server.ts";

/** `netserver -D -p PORT [-L HOST]` inside another process, until close(). */
export async function startNetserver(o: EmbedOptions): Promise<ServerHandle> {
  const plan = NetserverPlan.parse({ port: o.port, listenAddress: o.host, family: "any", foreground: true, serial: false, verbosity: 1, debug: 0, maxTests: DEFAULT_MAX_TESTS });
  const server = await NetserverServer.start(plan, { out: o.sink, err: o.sink, signal: new AbortController().signal }, o.policy);
  return { port: server.port, close: () => server.stop() };
}
