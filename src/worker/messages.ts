import type { Endpoint, StreamSpec } from "../stream-spec.ts";
import type { TcpInfo } from "../sockopt/tcp-info.ts";

export interface SocketBufferSizes {
  send: number;
  recv: number;
}

/** Main thread → Worker. Streams are addressed by (plane, stream) so one Worker serves many tests at once. */
export type ToWorker =
  /** `go`: the stream starts as soon as it is open, with no "go" of its own (DataPlane.open's `go`). */
  | { t: "open"; plane: number; stream: number; spec: StreamSpec; counters: SharedArrayBuffer; histograms: SharedArrayBuffer; go?: true }
  | { t: "go"; plane: number }
  | { t: "stop"; plane: number; stream?: number }
  | { t: "pause"; plane: number }
  | { t: "send"; plane: number; stream: number; bytes: Uint8Array; to?: Endpoint }
  | { t: "pin"; cpu: number };

export type EndReason = "stopped" | "limit" | "eof" | "idle" | "marker" | "error";

/** Worker → main thread. */
export type FromWorker =
  | { t: "opened"; plane: number; stream: number; localPort?: number; fd?: number }
  | { t: "failed"; plane: number; stream: number; error: { message: string; code?: string } }
  | { t: "ended"; plane: number; stream: number; reason: EndReason; error?: { message: string; code?: string } }
  | { t: "event"; plane: number; stream: number; name: "datagram" | "fin" | "connected"; bytes?: Uint8Array; from?: Endpoint }
  /**
   * TCP_INFO of the stream's first open socket, at every sample (once a second, at go and at stop), with its
   * SO_SNDBUF and SO_RCVBUF as getsockopt reads them (what the kernel gave for -w, or what autotuning reached).
   */
  | { t: "tcp-info"; plane: number; stream: number; info: TcpInfo; buffers?: SocketBufferSizes }
  /** The same buffers read once on a stream's first socket right after -w set them (UDP has no TCP_INFO samples). */
  | { t: "buffers"; plane: number; stream: number; buffers: SocketBufferSizes }
  | { t: "log"; message: string }
  /** Every message a host posted in one turn of its event loop, in order (see createStreamHost). */
  | { t: "batch"; messages: FromWorker[] };
