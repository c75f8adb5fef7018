/**
 * Handing a main-thread socket to the streams without moving it to another thread: where a socket cannot cross
 * threads (no dup() through libc: Windows, macOS, musl), a socket a front end accepted or connected stays on the main
 * thread and is served there by the local stream host (src/engine/local-host.ts).
 *
 * Bun fixes a socket's handlers where it was made (reload() changes them for every socket of a listener), so the
 * main thread's sockets are made with delegating handlers: each event goes to the handlers a socket was handed to,
 * if any, else to its maker's. A parked socket (handed off, not yet opened by its stream) holds its data until the
 * stream takes it, as the kernel holds it for a Worker that adopts a duplicate.
 */
import type { Net, TcpHandlers, TcpSocket, UdpHandlers, UdpSocket } from "./types.ts";

type AnyTcp = TcpSocket<unknown>;
type Events = { tcp?: TcpHandlers<unknown>; udp?: UdpHandlers; held: { d: Uint8Array; port?: number; address?: string }[]; ended: boolean; closed: boolean };

const routed = new WeakMap<object, Events>();
const parked = new Map<number, { socket: AnyTcp | UdpSocket; events: Events }>();
/**
 * Ids far above any descriptor a process holds: a main-thread connect with a real `fd` (a socket Sockopt connected,
 * where libc is there and hand-off is local by choice) still reaches the runtime.
 */
let nextId = 2 ** 30;

/** Parks `socket` for a stream to take by the returned id (the `fd` of a local adopt). */
export function park(socket: AnyTcp | UdpSocket): number {
  const events: Events = { held: [], ended: false, closed: false };
  routed.set(socket, events);
  const id = nextId++;
  parked.set(id, { socket, events });
  return id;
}

function take(id: number) {
  const p = parked.get(id);
  if (!p) throw new Error(`no socket handed off as ${id}`);
  parked.delete(id);
  return p;
}

function tcpEvents<T>(h: TcpHandlers<T>): TcpHandlers<T> {
  const to = (s: TcpSocket<T>) => routed.get(s);
  return {
    open: (s) => h.open?.(s),
    data(s, d) {
      const r = to(s);
      if (!r) return h.data?.(s, d);
      // Bun reuses the buffer it passes after the handler returns.
      if (!r.tcp) r.held.push({ d: d.slice() });
      else r.tcp.data?.(s as AnyTcp, d);
    },
    drain: (s) => { const r = to(s); r ? r.tcp?.drain?.(s as AnyTcp) : h.drain?.(s); },
    end(s) {
      const r = to(s);
      if (!r) return h.end?.(s);
      if (!r.tcp) r.ended = true;
      else r.tcp.end?.(s as AnyTcp);
    },
    close(s, err) {
      const r = to(s);
      if (!r) return h.close?.(s, err);
      if (!r.tcp) r.closed = true;
      else r.tcp.close?.(s as AnyTcp, err);
    },
    error: (s, err) => { const r = to(s); r ? r.tcp?.error?.(s as AnyTcp, err) : h.error?.(s, err); },
    connectError: (s, err) => h.connectError?.(s, err),
  };
}

/**
 * A datagram for a parked or taken UDP socket: to the stream that took it, else held until one does. The runtime's
 * own sockets come here through their handlers; a socket no runtime reads (src/net/udp-peer-view.ts) directly.
 */
export function routeDatagram(s: UdpSocket, d: Uint8Array, port: number, address: string): void {
  const r = routed.get(s);
  if (!r) return;
  if (!r.udp) r.held.push({ d: d.slice(), port, address });
  else r.udp.data?.(s, d, port, address);
}

function udpEvents(h: UdpHandlers): UdpHandlers {
  return {
    data(s, d, port, address) {
      if (!routed.has(s)) return h.data?.(s, d, port, address);
      routeDatagram(s, d, port, address);
    },
    drain: (s) => { const r = routed.get(s); r ? r.udp?.drain?.(s) : h.drain?.(s); },
    error: (s, err) => { const r = routed.get(s); r ? r.udp?.error?.(s, err) : h.error?.(s, err); },
  };
}

/**
 * The main thread's socket API when hand-off is local: sockets made here route their events as above, and a
 * connect or udpSocket with `fd` takes a parked socket (the local stream host's adopt) instead of a descriptor.
 */
export function localNet(net: Net): Net {
  return {
    listen: (o) => net.listen({ ...o, socket: tcpEvents(o.socket) }),
    connect<T>(o: Parameters<Net["connect"]>[0] & { data: T; socket: TcpHandlers<T> }): Promise<TcpSocket<T>> {
      if (o.fd === undefined || !parked.has(o.fd)) return net.connect({ ...o, socket: tcpEvents(o.socket) });
      const { socket, events } = take(o.fd);
      const s = socket as TcpSocket<T>;
      s.data = o.data;
      // As Bun does for a socket adopted by descriptor: open now, what arrived meanwhile on a later turn (once the
      // stream has said it is open); events keep being held, in order, until then.
      o.socket.open?.(s);
      setTimeout(() => {
        for (const h of events.held.splice(0)) o.socket.data?.(s, h.d);
        events.tcp = o.socket as TcpHandlers<unknown>;
        // A drain in between was not seen; one more is harmless (a writer just tries again).
        o.socket.drain?.(s);
        if (events.ended) o.socket.end?.(s);
        if (events.closed) o.socket.close?.(s);
      });
      return Promise.resolve(s);
    },
    udpSocket(o) {
      if (o.fd === undefined || !parked.has(o.fd)) return net.udpSocket({ ...o, socket: udpEvents(o.socket) });
      const { socket, events } = take(o.fd);
      const s = socket as UdpSocket;
      setTimeout(() => {
        for (const h of events.held.splice(0)) o.socket.data?.(s, h.d, h.port!, h.address!);
        events.udp = o.socket;
      });
      return Promise.resolve(s);
    },
  };
}
