import { encodeSyncInt, SyncCommand, SyncFramer, TestState } from "./linux-sync-codec.ts";
import { err, info, type SessionLog } from "./events.ts";
import type { Transport } from "./transport.ts";

/**
 * Receiver side of the ntttcp-for-linux sync protocol (TCP base−1), docs/protocols/ntttcp-linux.md §4.3. One instance
 * serves every sync connection of a test: the state and the negotiated cycle are shared, as in the real receiver, so a
 * second sender asking 'X' while a test runs is told 12. Unlike the real receiver, whose sync thread goes quiet about a
 * second after a finished test, this one keeps answering (13) until the glue closes it, so a late 'E' from a sender
 * with a cool-down still gets "receiver exited from current test" instead of a read error.
 */

export interface LinuxSyncReceiverOptions {
  /** The receiver's own -t in seconds (0 = continuous). Its -W/-C are not part of the negotiation. */
  duration: number;
  /** -M: senders get 'W' and wait for the one that sends 'L'. */
  multiClient: boolean;
}

export type LinuxSyncReceiverEvent =
  | SessionLog
  | { type: "negotiated"; cycle: number }
  /** The test starts now ('R', or 'L' in -M); byte counters should be zeroed. */
  | { type: "start" }
  /** A sender sent 'E' while the test was running: stop measuring now. */
  | { type: "interrupted" };

/** At most this many senders take part in one -M test; the last seat is reserved for the -L sender. */
export const MAX_REMOTE_ENDPOINTS = 8;

export class LinuxSyncReceiver {
  state: TestState = TestState.notStarted;
  /** Undefined until some sender proposed a cycle; 0 = continuous. */
  negotiatedCycle: number | undefined;
  /** A Set, so a sender repeating 'R' holds one seat and is forgotten whole when it closes. */
  private readonly waiting = new Set<Transport>();
  /**
   * The real receiver keeps its last reply in one variable; an 'L' without -M re-sends it
   * (docs/protocols/ntttcp-linux.md §4.3).
   */
  private lastReply = 0;
  private readonly conns = new Set<LinuxSyncReceiverConnection>();

  constructor(
    readonly options: LinuxSyncReceiverOptions,
    private readonly emit: (e: LinuxSyncReceiverEvent) => void,
  ) {}

  /** Binds a newly accepted sync connection. */
  attach(transport: Transport): LinuxSyncReceiverConnection {
    const c = new LinuxSyncReceiverConnection(this, transport);
    this.conns.add(c);
    return c;
  }

  /** The local timer ended the test. */
  finish(): void {
    this.state = TestState.finished;
    this.waiting.clear();
  }

  /** A test began without this session (a sender that never contacted the sync port): 'X' is answered 12 until it ends. */
  runningElsewhere(): void {
    this.state = TestState.running;
  }

  /** -H: get ready for the next test. */
  reset(): void {
    this.state = TestState.notStarted;
    this.negotiatedCycle = undefined;
    this.waiting.clear();
  }

  closeAll(): void {
    for (const c of this.conns) c.close();
  }

  /** @internal */
  forget(c: LinuxSyncReceiverConnection): void {
    this.conns.delete(c);
    this.waiting.delete(c.transport);
  }

  /** @internal Answers one request; returns the values to write to this connection (in order). */
  handle(from: Transport, v: number): number[] {
    const { options } = this;
    let reply: number | undefined;
    switch (v) {
      case SyncCommand.exit:
        if (this.state === TestState.running) {
          this.state = TestState.finished;
          this.emit(info("test exited because sender side was interrupted"));
          this.emit({ type: "interrupted" });
        }
        reply = this.state;
        break;
      case SyncCommand.query:
        reply = this.state;
        break;
      case SyncCommand.run:
        if (options.multiClient) {
          if (!this.waiting.has(from) && this.waiting.size >= MAX_REMOTE_ENDPOINTS - 1) {
            this.emit(err("too many client endpoints. reject one."));
            reply = SyncCommand.exit;
          } else {
            this.waiting.add(from);
            reply = SyncCommand.wait;
          }
        } else {
          reply = SyncCommand.run;
          this.begin();
        }
        break;
      case SyncCommand.last:
        if (options.multiClient) {
          // Everyone waiting, including this sender, is released first; this sender then also gets the normal
          // reply, so the last client reads two 'R' (verified in ntttcp-linux-sync-multiclient.txt).
          this.waiting.add(from);
          const release = encodeSyncInt(SyncCommand.run);
          for (const t of this.waiting) t.write(release);
          this.waiting.clear();
          reply = SyncCommand.run;
          this.begin();
        } else {
          this.emit(err("one sender endpoint says it is the last client ('-L');"));
          this.emit(err("but receiver currently is not running in multi-clients mode ('-M');"));
          this.emit(err("this sender endpoint will be ignored."));
          return [this.lastReply];
        }
        break;
      default:
        reply = this.negotiate(v);
    }
    this.lastReply = reply;
    return [reply];
  }

  private begin(): void {
    this.state = TestState.running;
    this.emit(info("Network activity progressing..."));
    this.emit({ type: "start" });
  }

  private negotiate(v: number): number {
    const d = this.options.duration;
    let cycle: number;
    if (this.options.multiClient) cycle = d;
    else if (v === 0) {
      if (d !== 0) this.emit(info("test is negotiated to run with continuous mode"));
      cycle = 0;
    } else if (d === 0) cycle = 0;
    else if (d < v) {
      cycle = v;
      this.emit(info(`Test cycle time negotiated is: ${v} seconds`));
    } else cycle = d;
    this.negotiatedCycle = cycle;
    this.emit({ type: "negotiated", cycle });
    return cycle;
  }
}

export class LinuxSyncReceiverConnection {
  private readonly framer = new SyncFramer();
  private open = true;

  constructor(
    private readonly server: LinuxSyncReceiver,
    readonly transport: Transport,
  ) {}

  onData(bytes: Uint8Array): void {
    if (!this.open) return;
    for (const v of this.framer.push(bytes)) {
      for (const r of this.server.handle(this.transport, v)) this.transport.write(encodeSyncInt(r));
    }
  }

  /** Peer closed (FIN or RST): nothing to answer any more. */
  onClose(): void {
    this.close();
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.server.forget(this);
    this.transport.close();
  }
}
