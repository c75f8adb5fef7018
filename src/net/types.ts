/**
 * The slice of Bun's socket API the data plane uses. Under Bun these are Bun's own objects (no wrapper on the hot
 * path); under Deno or Node the node-compat adapter provides the same shapes.
 */

export interface TcpSocket<T> {
  data: T;
  /** Bytes the kernel took (sockets are unbuffered), -1 when closed. Always pass a length with an offset. */
  write(buf: Uint8Array, offset?: number, length?: number): number;
  end(): void;
  terminate(): void;
  readonly fd?: number;
  readonly remoteAddress?: string;
  readonly remotePort?: number;
  readonly localPort?: number;
  readonly localAddress?: string;
}

export interface TcpHandlers<T> {
  open?(s: TcpSocket<T>): void;
  data?(s: TcpSocket<T>, d: Uint8Array): void;
  drain?(s: TcpSocket<T>): void;
  end?(s: TcpSocket<T>): void;
  close?(s: TcpSocket<T>, err?: Error): void;
  error?(s: TcpSocket<T>, err: Error): void;
  connectError?(s: TcpSocket<T>, err: Error): void;
}

export interface TcpListener {
  readonly port: number;
  readonly fd?: number;
  stop(closeActive?: boolean): void;
}

export interface UdpSocket {
  readonly port: number;
  readonly fd?: number;
  readonly closed: boolean;
  send(data: Uint8Array, port?: number, address?: string): boolean;
  /** Connected sockets: a list of datagrams; unconnected: [data, port, address, ...]. Returns the count sent. */
  sendMany(packets: readonly (Uint8Array | string | number)[]): number;
  close(): void;
}

export interface UdpHandlers {
  data?(s: UdpSocket, d: Uint8Array, port: number, address: string): void;
  drain?(s: UdpSocket): void;
  error?(s: UdpSocket, err: Error): void;
}

export interface Net {
  connect<T>(o: {
    hostname?: string;
    port?: number;
    fd?: number;
    data: T;
    socket: TcpHandlers<T>;
    /**
     * The peer's FIN goes to `end` and the socket stays open for writing (otherwise the runtime closes it there): a
     * peer that stops first is then seen by the next writes, as a reset or a broken pipe.
     */
    allowHalfOpen?: boolean;
  }): Promise<TcpSocket<T>>;
  /** `fd`: take over a listening socket made elsewhere (Bun only); hostname and port are then not used. */
  listen<T>(o: { hostname: string; port: number; fd?: number; data: T; socket: TcpHandlers<T>; reusePort?: boolean }): TcpListener;
  udpSocket(o: {
    hostname?: string;
    port?: number;
    /** Adopt a bound socket; Bun then treats it as unconnected (every send names the peer). */
    fd?: number;
    connect?: { hostname: string; port: number };
    socket: UdpHandlers;
  }): Promise<UdpSocket>;
}
