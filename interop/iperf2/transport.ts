/**
 * The only ways a session touches the network. The glue in compat/iperf2 binds them to real sockets (or hands the
 * socket to a Worker once the session has decided what the connection is for); tests bind them to arrays.
 */
export interface StreamTransport {
  write(bytes: Uint8Array): void;
  /** Half-close: FIN after the queued bytes; reading goes on until the peer's EOF. */
  end(): void;
  /** Full close, now. */
  close(): void;
}

export interface Peer {
  host: string;
  port: number;
}

export interface DatagramTransport {
  send(bytes: Uint8Array, to: Peer): void;
}

export function peerKey(p: Peer): string {
  return p.host.includes(":") ? `[${p.host}]:${p.port}` : `${p.host}:${p.port}`;
}

/** Records what a session wrote; for tests and replays. */
export class RecordingStream implements StreamTransport {
  readonly writes: Uint8Array[] = [];
  ended = false;
  closed = false;
  write(bytes: Uint8Array): void {
    if (this.closed || this.ended) throw new Error("write after end/close");
    this.writes.push(bytes.slice());
  }
  end(): void {
    this.ended = true;
  }
  close(): void {
    this.closed = true;
  }
  get written(): Uint8Array {
    const total = this.writes.reduce((n, w) => n + w.length, 0);
    const out = new Uint8Array(total);
    let off = 0;
    for (const w of this.writes) {
      out.set(w, off);
      off += w.length;
    }
    return out;
  }
}

export class RecordingDatagrams implements DatagramTransport {
  readonly sent: { bytes: Uint8Array; to: Peer }[] = [];
  send(bytes: Uint8Array, to: Peer): void {
    this.sent.push({ bytes: bytes.slice(), to: { ...to } });
  }
}
