import * as net from "node:net";
import * as dgram from "node:dgram";
import { tracingChannel } from "node:diagnostics_channel";
import type { Net, TcpHandlers, TcpSocket, UdpHandlers, UdpSocket } from "./types.ts";

/**
 * node:net / node:dgram behind Bun's socket shapes, for running from source under Deno (or Node). Slower than Bun's
 * native sockets; correctness only. node buffers writes, so a write is refused (0) while a previous one is queued,
 * which gives the same partial-write/drain rhythm as Bun.
 */
class NodeTcp<T> implements TcpSocket<T> {
  blocked = false;
  constructor(readonly sock: net.Socket, public data: T) {}
  write(buf: Uint8Array, offset = 0, length = buf.byteLength - offset): number {
    if (this.sock.destroyed) return -1;
    if (this.blocked) return 0;
    // node keeps a reference until flushed; copy so callers may reuse their buffer at once.
    this.blocked = !this.sock.write(buf.slice(offset, offset + length));
    return length;
  }
  end(): void { this.sock.end(); }
  terminate(): void { this.sock.destroy(); }
  get remoteAddress() { return this.sock.remoteAddress; }
  get remotePort() { return this.sock.remotePort; }
  get localPort() { return this.sock.localPort; }
}

function wire<T>(sock: net.Socket, data: T, h: TcpHandlers<T>): NodeTcp<T> {
  const s = new NodeTcp(sock, data);
  sock.setNoDelay(true);
  sock.on("data", (d: Buffer) => h.data?.(s, d));
  sock.on("drain", () => { s.blocked = false; h.drain?.(s); });
  sock.on("end", () => h.end?.(s));
  sock.on("error", (e) => h.error?.(s, e));
  sock.on("close", () => h.close?.(s));
  return s;
}

/**
 * Datagrams accepted but not yet handed to the runtime; beyond either bound send() refuses, like a full kernel
 * buffer. Deep enough for a paced sender's burst credit, so only unpaced senders meet it.
 */
const UDP_QUEUE_DATAGRAMS = 4096;
const UDP_QUEUE_BYTES = 1 << 20;

/**
 * Deno's node:dgram runs concurrent sends as separate tasks and they leave in reverse order (measured: 20000
 * back-to-back sends arrive last-first). So datagrams queue here and go one at a time, the next from the previous
 * one's callback. The queue holds copies: senders restamp their buffers right after send() returns.
 */
class NodeUdp implements UdpSocket {
  closed = false;
  private queue: ({ data: Uint8Array; port?: number; address?: string } | undefined)[] = [];
  private head = 0;
  private queuedBytes = 0;
  private sending = false;
  private refused = false;
  private failure: Error | undefined;

  constructor(readonly sock: dgram.Socket, readonly connected: boolean, private readonly h: UdpHandlers) {}
  get port() { return this.sock.address().port; }

  send(data: Uint8Array, port?: number, address?: string): boolean {
    if (this.failure) {
      // As Bun does, a failed send (e.g. the peer's ICMP port unreachable) throws from the next call.
      const e = this.failure;
      this.failure = undefined;
      throw e;
    }
    if (this.closed || this.queue.length - this.head >= UDP_QUEUE_DATAGRAMS || this.queuedBytes + data.byteLength > UDP_QUEUE_BYTES) {
      this.refused = true;
      return false;
    }
    this.queuedBytes += data.byteLength;
    this.queue.push({ data: data.slice(), port, address });
    if (!this.sending) this.next();
    return true;
  }

  sendMany(packets: readonly (Uint8Array | string | number)[]): number {
    let n = 0;
    if (this.connected) {
      for (const p of packets) {
        if (!this.send(p as Uint8Array)) break;
        n++;
      }
      return n;
    }
    for (let i = 0; i + 2 < packets.length; i += 3) {
      if (!this.send(packets[i] as Uint8Array, packets[i + 1] as number, packets[i + 2] as string)) break;
      n++;
    }
    return n;
  }

  private readonly next = (err?: Error | null): void => {
    if (err) this.failure = err;
    const d = this.queue[this.head];
    if (!d) {
      this.queue = [];
      this.head = 0;
      this.sending = false;
      if (this.closed) this.sock.close();
      else if (this.refused) {
        this.refused = false;
        this.h.drain?.(this);
      }
      return;
    }
    this.queue[this.head++] = undefined;
    this.queuedBytes -= d.data.byteLength;
    this.sending = true;
    if (this.connected) this.sock.send(d.data, this.next);
    else this.sock.send(d.data, d.port, d.address, this.next);
  };

  /** Queued datagrams still go out (end markers are sent right before close). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.sending) this.sock.close();
  }
}

/**
 * Callers read the port (and expect bind errors) right after listen(), as with Bun. server.listen(port, host)
 * resolves the host first and binds a tick later, so its port is unknown on return; _listen2 (the bind step Node's
 * cluster and Deno's node:net both use) binds at once. Its errors are only emitted a tick later, but the
 * net.server.listen tracing channel hands them over synchronously, code (EADDRINUSE ...) included.
 */
const bindErrors = new WeakMap<net.Server, unknown>();
tracingChannel<{ server: net.Server }>("net.server.listen").subscribe({ error: (m) => void bindErrors.set(m.server, m.error) });

function bindNow(server: net.Server, host: string, port: number): void {
  const family = net.isIP(host);
  const listen2 = (server as unknown as { _listen2?: (host: string, port: number, family: number, backlog: number) => void })._listen2;
  if (family === 0 || typeof listen2 !== "function") {
    server.listen(port, host);
    return;
  }
  listen2.call(server, host, port, family, 511);
  if (server.address()) return;
  server.once("error", () => {}); // thrown here; without a listener node would raise it again a tick later
  throw bindErrors.get(server) ?? new Error(`listen ${host}:${port} failed`);
}

export const nodeNet: Net = {
  connect<T>(o: { hostname?: string; port?: number; fd?: number; data: T; socket: TcpHandlers<T>; allowHalfOpen?: boolean }) {
    return new Promise<TcpSocket<T>>((resolve, reject) => {
      const allowHalfOpen = o.allowHalfOpen ?? false;
      const sock = o.fd !== undefined ? new net.Socket({ fd: o.fd, readable: true, writable: true, allowHalfOpen }) : net.connect({ host: o.hostname, port: o.port!, allowHalfOpen });
      const s = wire(sock, o.data, o.socket);
      const fail = (e: Error) => reject(e);
      sock.once("error", fail);
      const ready = () => { sock.off("error", fail); o.socket.open?.(s); resolve(s); };
      if (o.fd !== undefined) queueMicrotask(ready);
      else sock.once("connect", ready);
    });
  },
  listen<T>(o: { hostname: string; port: number; fd?: number; data: T; socket: TcpHandlers<T> }) {
    if (o.fd !== undefined) throw new Error("taking over a listening socket needs the Bun runtime: run the compiled binary or bun");
    const server = net.createServer((sock) => {
      const s = wire(sock, o.data, o.socket);
      o.socket.open?.(s);
    });
    bindNow(server, o.hostname, o.port);
    return {
      get port() { return (server.address() as net.AddressInfo | null)?.port ?? o.port; },
      stop: () => { server.close(); },
    };
  },
  udpSocket(o: { hostname?: string; port?: number; fd?: number; connect?: { hostname: string; port: number }; socket: UdpHandlers }) {
    if (o.fd !== undefined) return Promise.reject(new Error("adopting a UDP socket needs the Bun runtime: run the compiled binary or bun"));
    return new Promise<UdpSocket>((resolve, reject) => {
      const family = (o.connect?.hostname ?? o.hostname ?? "").includes(":") ? "udp6" : "udp4";
      const sock = dgram.createSocket(family);
      const u = new NodeUdp(sock, !!o.connect, o.socket);
      sock.on("message", (d, rinfo) => o.socket.data?.(u, d, rinfo.port, rinfo.address));
      sock.once("error", reject);
      const ready = () => {
        sock.off("error", reject);
        sock.on("error", (e) => o.socket.error?.(u, e));
        resolve(u);
      };
      sock.bind(o.port ?? 0, o.hostname, () => {
        if (!o.connect) return ready();
        sock.connect(o.connect.port, o.connect.hostname, ready);
      });
    });
  },
};
