/**
 * One peer's share of an unconnected UDP socket, as a socket of its own. iperf3's UDP server gives each stream a
 * socket bound to the server port and connected to its client (SO_REUSEPORT, then connect), which needs libc; where
 * there is none the one socket on the port hands each known peer's datagrams to that peer's view, and a view sends
 * to its peer from the port. A view is handed off locally like any socket (src/net/local-hand-off.ts), so the
 * stream that takes it reads and counts as it would on a socket of its own.
 */
import { park, routeDatagram } from "./local-hand-off.ts";
import type { UdpSocket } from "./types.ts";

export interface Peer {
  host: string;
  port: number;
}

export class UdpPeerView implements UdpSocket {
  closed = false;
  readonly fd = undefined;
  /** The id a stream adopts it by (StreamSpec adopt `fd` with `local`). */
  readonly id: number;

  constructor(
    private readonly shared: UdpSocket,
    readonly peer: Peer,
    private readonly onClose: (v: UdpPeerView) => void,
  ) {
    this.id = park(this);
  }

  get port(): number {
    return this.shared.port;
  }

  send(data: Uint8Array, port = this.peer.port, address = this.peer.host): boolean {
    return !this.closed && this.shared.send(data, port, address);
  }

  /** [data, port, address, ...] as on any unconnected socket (an adopted sender names its peer in every entry). */
  sendMany(packets: readonly (Uint8Array | string | number)[]): number {
    return this.closed ? 0 : this.shared.sendMany(packets);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
  }

  /** A datagram from the peer, read by the shared socket. */
  deliver(d: Uint8Array, port: number, address: string): void {
    if (!this.closed) routeDatagram(this, d, port, address);
  }
}
