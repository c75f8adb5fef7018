import { encodeSyncInt, safeCycleProposal, SyncCommand, SyncFramer, TestState } from "./linux-sync-codec.ts";
import { err, info, type SessionLog } from "./events.ts";
import type { Transport } from "./transport.ts";

/**
 * Sender side of the ntttcp-for-linux sync protocol, docs/protocols/ntttcp-linux.md §4.4: 'X' → cycle proposal → (data
 * connections) → 'R' or 'L' → ['W'] 'R' → run; at the end 'E' when the measured time was shorter than the cycle. The
 * session never opens the data connections itself: it emits "connect-data" and waits for dataReady().
 */

export interface LinuxSyncSenderOptions {
  /** W + t + C in seconds. */
  cycle: number;
  /** -t, to tell whether the negotiated cycle differs from what the user asked for. */
  duration: number;
  /** -L: this sender releases a -M receiver. */
  last: boolean;
  /**
   * Propose a cycle the receiver cannot take for a command (69/76/82/88 → +1). The real sender does not, and then
   * adopts a state code as its cycle; off only to reproduce that.
   */
  avoidCollisions?: boolean;
}

export type LinuxSyncSenderPhase =
  | "idle"
  | "query"
  | "negotiate"
  | "connect-data"
  | "request-start"
  | "waiting-last"
  | "running"
  | "ending"
  | "done"
  | "failed";

export type LinuxSyncSenderEvent =
  | SessionLog
  | { type: "negotiated"; cycle: number }
  /** Open the data connections now, then call dataReady(). */
  | { type: "connect-data" }
  | { type: "start" }
  | { type: "failed"; reason: "busy" | "not-ready" | "closed" | "bad-reply"; message: string }
  /** After end(): receiverExited = the receiver confirmed with 13. */
  | { type: "ended"; receiverExited: boolean };

export class LinuxSyncSender {
  phase: LinuxSyncSenderPhase = "idle";
  cycle: number | undefined;
  private readonly framer = new SyncFramer();

  constructor(
    readonly options: LinuxSyncSenderOptions,
    private readonly transport: Transport,
    private readonly emit: (e: LinuxSyncSenderEvent) => void,
  ) {}

  /** The sync connection is up. */
  start(): void {
    this.expect("idle");
    this.phase = "query";
    this.send(SyncCommand.query);
  }

  /** All data connections exist. */
  dataReady(): void {
    this.expect("connect-data");
    this.phase = "request-start";
    this.send(this.options.last ? SyncCommand.last : SyncCommand.run);
  }

  /**
   * The local timer ended. `cutShort` = measured time < cycle (any run with W or C, or an interrupt): tell the
   * receiver with 'E' and wait for its answer; otherwise just close.
   */
  end(cutShort: boolean): void {
    if (this.phase !== "running") {
      this.close();
      return;
    }
    if (cutShort) {
      this.phase = "ending";
      this.send(SyncCommand.exit);
    } else {
      this.finishEnd(false, false);
    }
  }

  /** No answer to 'E' in time: the receiver stopped serving, which is harmless. */
  endTimedOut(): void {
    if (this.phase === "ending") this.finishEnd(false, true);
  }

  onData(bytes: Uint8Array): void {
    for (const v of this.framer.push(bytes)) this.reply(v);
  }

  onClose(): void {
    switch (this.phase) {
      case "done":
      case "failed":
        return;
      case "running":
        // The receiver may close its sync socket when its own timer ends; the data keep their own clock.
        this.phase = "done";
        return;
      case "ending":
        this.finishEnd(false, true);
        return;
      default:
        this.fail("closed", "cannot read data from the socket for sender/receiver sync");
    }
  }

  private reply(v: number): void {
    switch (this.phase) {
      case "query":
        if (v === TestState.running) {
          this.fail("busy", "receiver is busy with an existing test running");
          return;
        }
        this.phase = "negotiate";
        this.send(this.options.avoidCollisions === false ? this.options.cycle : safeCycleProposal(this.options.cycle));
        return;
      case "negotiate":
        if (v < 0) {
          this.fail("bad-reply", `receiver answered an invalid test cycle time: ${v}`);
          return;
        }
        this.cycle = v;
        if (v === 0) this.emit(info("test is negotiated to run with continuous mode"));
        else if (v !== this.options.duration) this.emit(info(`Test cycle time negotiated is: ${v} seconds`));
        this.emit({ type: "negotiated", cycle: v });
        this.phase = "connect-data";
        this.emit({ type: "connect-data" });
        return;
      case "request-start":
        if (v === SyncCommand.wait) {
          this.phase = "waiting-last";
          this.emit(info("waiting for the last client to join the test"));
          return;
        }
        this.started(v);
        return;
      case "waiting-last":
        this.started(v);
        return;
      case "running":
        // The -L sender of a -M test reads a second 'R'; anything else unsolicited is ignored like the real sender.
        return;
      case "ending":
        this.finishEnd(v === TestState.finished, false);
        return;
      default:
        return;
    }
  }

  private started(v: number): void {
    if (v !== SyncCommand.run) {
      this.fail("not-ready", "receiver is not ready to run test with this sender");
      return;
    }
    this.phase = "running";
    this.emit(info("Network activity progressing..."));
    this.emit({ type: "start" });
  }

  private finishEnd(receiverExited: boolean, silent: boolean): void {
    if (this.phase === "ending" && !silent) {
      this.emit(receiverExited ? info("receiver exited from current test") : err("receiver is not able to handle this interrupt"));
    } else if (this.phase === "ending") {
      this.emit(err("cannot read data from the socket for sender/receiver sync"));
    }
    this.phase = "done";
    this.emit({ type: "ended", receiverExited });
    this.transport.close();
  }

  private fail(reason: "busy" | "not-ready" | "closed" | "bad-reply", message: string): void {
    this.phase = "failed";
    this.emit(err(message));
    this.emit({ type: "failed", reason, message });
    this.transport.close();
  }

  private close(): void {
    if (this.phase !== "done" && this.phase !== "failed") this.phase = "done";
    this.transport.close();
  }

  private send(v: number): void {
    this.transport.write(encodeSyncInt(v));
  }

  private expect(p: LinuxSyncSenderPhase): void {
    if (this.phase !== p) throw new Error(`sync sender: ${p} expected, in ${this.phase}`);
  }
}
