/** The only way a native session touches the network: write bytes, close. Received bytes are pushed into the session. */
export interface ControlTransport {
  write(bytes: Uint8Array): void;
  close(): void;
}

/** How long each end waits for the other's next message, by what it waits for. */
export const DEADLINE_MS = {
  /** hello → welcome, welcome → test: a peer that is there answers at once. */
  handshake: 5_000,
  /** test → ready: the server opens its listeners (and, reversed, connects its senders). */
  prepare: 15_000,
  /** ready → go: the client connects its senders. */
  connect: 15_000,
  /** Between a running client's messages (it sends "alive" every 2 s). */
  running: 10_000,
  /** finish → results: the server drains its receivers (≤ 2 s) and stops its streams. */
  results: 25_000,
} as const;

/** Set-up per stream on top of `prepare` and `connect`: 10,000 flows took 12-20 s to connect under load (+20 s). */
const SET_UP_PER_STREAM_MS = 2;

/** The deadline of a set-up wait (`prepare`, `connect`) for a test of `streams` streams. */
export function setUpDeadlineMs(base: number, streams: number): number {
  return base + streams * SET_UP_PER_STREAM_MS;
}
