/**
 * The only thing a session may touch: bytes out and a close. The glue in compat/ntttcp binds it to a real socket and
 * pushes received bytes into the session's onData/onClose; tests bind it to an array.
 */
export interface Transport {
  write(bytes: Uint8Array): void;
  close(): void;
}

/** A transport that records what a session wrote; used by tests and by replay. */
export class RecordingTransport implements Transport {
  readonly writes: Uint8Array[] = [];
  closed = false;
  write(bytes: Uint8Array): void {
    if (this.closed) throw new Error("write after close");
    this.writes.push(bytes.slice());
  }
  close(): void {
    this.closed = true;
  }
}
