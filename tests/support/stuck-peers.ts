/**
 * Peers that hang a client: a listener whose accept queue is full (the kernel drops further SYNs, so a connect
 * hangs in SYN_SENT for up to 2 min, as against a busy server) and a server that accepts and never says a word.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { loadLibc } from "../../src/sockopt/libc.ts";
import { encodeSockaddr } from "../../src/sockopt/sockaddr.ts";

export interface Stuck {
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:port with backlog 0 and never accepts; one connection fills the queue. Linux glibc only. */
export async function fullBacklog(port: number): Promise<Stuck> {
  const c = await loadLibc();
  if (!c) throw new Error("fullBacklog needs bun:ffi and glibc");
  const fd = c.socket(2, 1, 0);
  const sa = encodeSockaddr("ipv4", "127.0.0.1", port);
  if (c.bind(fd, sa, sa.length) !== 0 || c.listen(fd, 0) !== 0) throw new Error(`cannot listen on ${port}: errno ${c.errno()}`);
  const fillers: Socket[] = [];
  // Backlog 0 queues one connection; the second then waits in SYN_SENT like everyone after it.
  for (let i = 0; i < 2; i++) {
    const s = connect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    fillers.push(s);
  }
  await new Promise((r) => setTimeout(r, 200));
  return {
    close: async () => {
      for (const s of fillers) s.destroy();
      c.close(fd);
    },
  };
}

/**
 * Accepts every connection and never reads nor writes, on an ephemeral port (`port`): closing the connections it
 * holds leaves them in TIME_WAIT, which would keep a fixed port busy for the next run.
 */
export async function silentPeer(): Promise<Stuck & { port: number }> {
  const held: Socket[] = [];
  const server: Server = createServer((s) => {
    s.pause();
    s.on("error", () => {});
    held.push(s);
  });
  await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of held) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Can this host make a full-backlog listener (bun:ffi + glibc)? */
export const canFillBacklog = async () => (await loadLibc()) !== undefined;
