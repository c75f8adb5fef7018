/// <reference lib="webworker" />
/** Data Worker entry: one stream host on this thread, with the thread's own sockets, options and blocking I/O. */
import { loadNet } from "../net/net.ts";
import { loadSockopt } from "../sockopt/sockopt.ts";
import { loadBlockingIo } from "../sockopt/blocking-io.ts";
import { createStreamHost } from "./stream-host.ts";
import type { FromWorker, ToWorker } from "./messages.ts";

const scope = globalThis as unknown as { postMessage(m: FromWorker): void; onmessage: ((e: MessageEvent<ToWorker>) => void) | null };
const handle = createStreamHost(
  (m) => scope.postMessage(m),
  async () => {
    const [net, sockopt, io] = await Promise.all([loadNet(), loadSockopt(), loadBlockingIo()]);
    return { net, sockopt, io };
  },
);
scope.onmessage = (ev) => handle(ev.data);
