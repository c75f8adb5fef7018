import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import { explainSocketError, UserError } from "../../src/errors.ts";
import type { Transport } from "../../interop/ntttcp/transport.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { connectTcp } from "../../src/worker/sockets.ts";
import { flushQueued, newQueued, SocketTransport, type Queued } from "../../src/net/write-queue.ts";

/**
 * Binds the ntttcp control sessions (Linux sync on base−1, Windows tokens on port+1000) to real sockets. Only these
 * few bytes go through the main thread; every data byte goes through the engine's Workers.
 */

export interface ControlHandlers {
  onData(bytes: Uint8Array): void;
  onClose(): void;
}

interface ConnState extends Queued {
  handlers: ControlHandlers | undefined;
  closed: boolean;
}

const newState = (): ConnState => ({ ...newQueued(), handlers: undefined, closed: false });

function handlersFor(): import("../../src/net/types.ts").TcpHandlers<ConnState> {
  return {
    data: (s, d) => s.data.handlers?.onData(d),
    drain: (s) => flushQueued(s),
    close: (s) => {
      if (s.data.closed) return;
      s.data.closed = true;
      s.data.handlers?.onClose();
    },
    error: () => {},
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Connects, retrying refused attempts (`attempts` × `delayMs`, Windows' 100 × 100 ms; 1 = no retry like the Linux
 * sender). `from`: the local address to bind first (Linux -a, Windows -nic), as both originals bind their sync and
 * token sockets like their data sockets, so a receiver sees one peer address.
 */
export async function connectControl(
  net: Net,
  host: string,
  port: number,
  make: (t: Transport) => ControlHandlers,
  retry: { attempts: number; delayMs: number } = { attempts: 1, delayMs: 0 },
  from?: string,
): Promise<Transport> {
  let last: unknown;
  for (let i = 0; i < retry.attempts; i++) {
    const state = newState();
    try {
      // Through Sockopt where there is one, so a failure names its real errno (Bun says ECONNREFUSED for all).
      const s = await connectTcp({ net, sockopt: await loadSockopt() }, { host, port }, from === undefined ? undefined : { host: from, port: 0 }, {}, state, handlersFor());
      const t = new SocketTransport(s);
      state.handlers = make(t);
      return t;
    } catch (e) {
      last = e;
      if (i + 1 < retry.attempts) await sleep(retry.delayMs);
    }
  }
  throw last;
}

/**
 * Listens for control connections; `accept` returns null to refuse one (too many, or not expected). `admit` sees the
 * peer's address first (--allow): a peer it refuses is closed before a byte is read.
 */
export function listenControl(
  net: Net,
  host: string,
  port: number,
  accept: (t: Transport, peer: { host: string | undefined; port: number | undefined }) => ControlHandlers | null,
  admit?: (peer: { host: string | undefined; port: number | undefined }) => boolean,
): TcpListener {
  try {
    return listenOn(net, host, port, accept, admit);
  } catch (e) {
    // A busy or foreign sync/token port is the user's to change, like a data port (Bun throws a bare Error here).
    throw e instanceof UserError ? e : explainSocketError(e, { host, port, role: "listen" });
  }
}

function listenOn(
  net: Net,
  host: string,
  port: number,
  accept: (t: Transport, peer: { host: string | undefined; port: number | undefined }) => ControlHandlers | null,
  admit?: (peer: { host: string | undefined; port: number | undefined }) => boolean,
): TcpListener {
  const base = handlersFor();
  return net.listen<ConnState>({
    hostname: host,
    port,
    data: newState(),
    socket: {
      ...base,
      open: (s) => {
        s.data = newState();
        const peer = { host: s.remoteAddress, port: s.remotePort };
        if (admit && !admit(peer)) {
          s.data.closed = true;
          s.end();
          return;
        }
        const h = accept(new SocketTransport(s), peer);
        if (h === null) s.terminate();
        else s.data.handlers = h;
      },
    },
  });
}
