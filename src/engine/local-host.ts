import { loadNet } from "../net/net.ts";
import type { FromWorker, ToWorker } from "../worker/messages.ts";
import { createStreamHost } from "../worker/stream-host.ts";

/**
 * The main thread's own stream host, for sockets handed off locally (src/net/local-hand-off.ts). It looks like a
 * Worker to the pool; messages cross in microtasks, as they would cross threads in turns of the event loop. No
 * socket options, TCP_INFO or blocking mode here: those need libc, whose absence is why this host exists.
 */
export class LocalHost {
  onmessage: ((ev: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  private readonly handle = createStreamHost(
    (m) => queueMicrotask(() => this.onmessage?.({ data: m } as MessageEvent<FromWorker>)),
    async () => ({ net: await loadNet(), sockopt: undefined, io: undefined }),
  );

  postMessage(m: ToWorker): void {
    queueMicrotask(() => this.handle(m));
  }

  terminate(): void {}
}
