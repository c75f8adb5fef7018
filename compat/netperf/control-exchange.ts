import { FrameReader } from "../../interop/netperf/frame-reader.ts";
import { encodePassphrase } from "../../interop/netperf/minor-messages.ts";
import { servErrno } from "../../interop/netperf/minor-messages.ts";
import { type ClientIo } from "./client.ts";
import { connectControl } from "./control-connection.ts";
import { SocketTransport } from "../../src/net/write-queue.ts";
import { strerror } from "../../lib/errno.ts";

/** netperf waits this long for a reply before it gives up (recv_response_timed_n). */
const RESPONSE_TIMEOUT_MS = 120_000;

/**
 * The control connection as the tests netperf runs without the omni session use it (REM_CPU, TCP_MSS, TCP_CC,
 * TCP_SENDFILE, UUID): requests answered by one 656-byte reply each.
 */
export interface Control {
  /** Sends one request; the reply, or undefined when the netserver closed, went silent or the user interrupted. */
  ask(request: Uint8Array): Promise<Uint8Array | undefined>;
  /** The next reply without a request (a test's results), as `ask` waits for it; `ms` bounds it, signal or not. */
  reply(ms?: number): Promise<Uint8Array | undefined>;
  close(): void;
}

export async function openControl(
  io: ClientIo,
  to: { host: string; controlPort: number; passphrase?: string },
  ip: string,
): Promise<Control | number> {
  const reader = new FrameReader();
  const replies: Uint8Array[] = [];
  let wake: () => void = () => {};
  let closed = false;
  const sock = await connectControl(io, to, ip, {
    data: (d) => {
      replies.push(...reader.push(d));
      wake();
    },
    closed: () => ((closed = true), wake()),
  }, io);
  if (typeof sock === "number") return sock;
  const control = new SocketTransport(sock);
  if (to.passphrase !== undefined) control.write(encodePassphrase(to.passphrase));
  // An explicit bound (results after a signal ended the data phase) is waited for even though the signal came.
  const reply = async (ms?: number) => {
    const deadline = performance.now() + (ms ?? RESPONSE_TIMEOUT_MS);
    const stopped = () => ms === undefined && io.signal.aborted;
    while (replies.length === 0 && !closed && !stopped() && performance.now() < deadline) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(0, deadline - performance.now()));
        const onAbort = () => r();
        io.signal.addEventListener("abort", onAbort, { once: true });
        wake = () => {
          clearTimeout(t);
          io.signal.removeEventListener("abort", onAbort);
          r();
        };
      });
    }
    return replies.shift();
  };
  return {
    ask: (request) => {
      control.write(request);
      return reply();
    },
    reply,
    close: () => control.end(),
  };
}

/**
 * The reply when the netserver accepted the request; otherwise netperf's report of why (stdout without a newline,
 * perror's text on stderr) and the exit status to end with.
 */
export function accepted(io: ClientIo, reply: Uint8Array | undefined, remoteErrorExit: number): Uint8Array | number {
  if (!reply) {
    io.err("recv_response: Connection reset by peer\n");
    return 1;
  }
  const errno = servErrno(reply);
  if (errno === 0) return reply;
  io.out(`netperf: remote error ${errno}`);
  io.err(`${strerror(errno)}\n`);
  return remoteErrorExit;
}
