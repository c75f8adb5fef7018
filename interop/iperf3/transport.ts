/** The only way a session touches the network: write bytes, close. Received bytes are pushed into the session. */
export interface ControlTransport {
  write(bytes: Uint8Array): void;
  close(): void;
}

/** How a session failed, in the terms a stock iperf3 prints it, plus our own one-line detail. */
export interface SessionFailure {
  iErrno: number;
  /** OS errno that goes with it; absent when the peer sent none. */
  errno?: number;
  /** What happened, for our logs and error line. */
  detail: string;
}
