import * as net from "node:net";
import * as dgram from "node:dgram";
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

class NodeUdp implements UdpSocket {
  constructor(readonly sock: dgram.Socket, readonly connected: boolean) {}
  closed = false;
  get port() { return this.sock.address().port; }
  send(data: Uint8Array, port?: number, address?: string): boolean {
    if (this.connected) this.sock.send(data);
    else this.sock.send(data, port, address);
    return true;
  }
  sendMany(packets: readonly (Uint8Array | string | number)[]): number {
    if (this.connected) {
      for (const p of packets) this.sock.send(p as Uint8Array);
      return packets.length;
    }
    for (let i = 0; i + 2 < packets.length; i += 3) this.sock.send(packets[i] as Uint8Array, packets[i + 1] as number, packets[i + 2] as string);
    return Math.floor(packets.length / 3);
  }
  close(): void { if (!this.closed) { this.closed = true; this.sock.close(); } }
}

export const nodeNet: Net = {
  connect<T>(o: { hostname?: string; port?: number; fd?: number; data: T; socket: TcpHandlers<T> }) {
    return new Promise<TcpSocket<T>>((resolve, reject) => {
      const sock = o.fd !== undefined ? new net.Socket({ fd: o.fd, readable: true, writable: true }) : net.connect({ host: o.hostname, port: o.port! });
      const s = wire(sock, o.data, o.socket);
      const fail = (e: Error) => reject(e);
      sock.once("error", fail);
      const ready = () => { sock.off("error", fail); o.socket.open?.(s); resolve(s); };
      if (o.fd !== undefined) queueMicrotask(ready);
      else sock.once("connect", ready);
    });
  },
  listen<T>(o: { hostname: string; port: number; data: T; socket: TcpHandlers<T> }) {
    const server = net.createServer((sock) => {
      const s = wire(sock, o.data, o.socket);
      o.socket.open?.(s);
    });
    server.listen(o.port, o.hostname);
    return {
      get port() { return (server.address() as net.AddressInfo | null)?.port ?? o.port; },
      stop: () => { server.close(); },
    };
  },
  udpSocket(o: { hostname?: string; port?: number; connect?: { hostname: string; port: number }; socket: UdpHandlers }) {
    return new Promise<UdpSocket>((resolve, reject) => {
      const family = (o.connect?.hostname ?? o.hostname ?? "").includes(":") ? "udp6" : "udp4";
      const sock = dgram.createSocket(family);
      const u = new NodeUdp(sock, !!o.connect);
      sock.on("message", (d, rinfo) => o.socket.data?.(u, d, rinfo.port, rinfo.address));
      sock.once("error", reject);
      sock.bind(o.port ?? 0, o.hostname, () => {
        if (!o.connect) return resolve(u);
        sock.connect(o.connect.port, o.connect.hostname, () => resolve(u));
      });
    });
  },
};
