import type { ServerPolicy } from "../access/server-policy.ts";

/**
 * A server started inside a process that runs others beside it (`anyperf serve`): it owns no process-wide state
 * (no exit, no signal handler, no stdout), prints through `sink` and stops on close().
 */
export interface EmbedOptions {
  /** Address to bind; undefined = the dialect's own wildcard. */
  host?: string;
  port: number;
  policy: ServerPolicy;
  /** Whole lines of the server's output. */
  sink(text: string): void;
}

export interface ServerHandle {
  readonly port: number;
  close(): Promise<void>;
}
