import type { DataPlane } from "../../src/engine/data-plane.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import type { Net, TcpListener } from "../../src/net/types.ts";
import type { Transport } from "../../interop/ntttcp/transport.ts";
import { WindowsTokenExchange } from "../../interop/ntttcp/windows-token.ts";
import { listenControl } from "./control.ts";
import type { NtttcpPlan } from "./plan.ts";
import type { LogLevel } from "./run.ts";

type Peer = { host: string | undefined; port: number | undefined };

/**
 * One token listener per thread on its data port + `offset`, each taking one exchange as 5.40's receiver does
 * (docs/protocols/ntttcp-windows.md §4.2). Listeners go into `into` as they bind, so the caller stops them all even
 * when a later bind throws.
 */
export function listenTokens(
  o: { net: Net; plan: NtttcpPlan; offset: number; admit: (peer: Peer) => boolean },
  exchange: (thread: number, t: Transport) => WindowsTokenExchange,
  into: TcpListener[],
): void {
  o.plan.threads.forEach((t, i) => {
    let taken = false;
    into.push(
      listenControl(o.net, t.host, t.port + o.offset, (tr) => {
        if (taken) return null;
        taken = true;
        const x = exchange(i, tr);
        queueMicrotask(() => x.start());
        return { onData: (b) => x.onData(b), onClose: () => x.onClose() };
      }, o.admit),
    );
  });
}

export type SenderKind = "windows sync" | "no sync";

/**
 * A Linux-dialect TCP receiver in sync mode also serves the senders that never contact its sync port, as `anyperf
 * serve` does (docs/protocols/ntttcp-interop.md §5.2): a Windows sync sender opens its data connections, sends no byte
 * and contacts data port + offset; a no-sync sender of either tool sends data at once. `start` is called once, with
 * the kind, when such a sender's test begins: a Windows sync sender's once every port holding a connection has done
 * its token exchange (its thread count need not be ours), a no-sync sender's at its first byte. A contact on the sync
 * port (`linuxContact`) leaves the start to the Linux sync session.
 */
export class OtherSenders {
  private contact: "linux" | "windows" | undefined;
  private readonly tokens = new Set<number>();
  private readonly waiting = new AbortController();
  private started = false;

  constructor(
    private readonly o: {
      net: Net;
      plan: NtttcpPlan;
      /** The receiver's Test, `plane` attached. */
      run: TestRun;
      plane: DataPlane;
      offset: number;
      admit: (peer: Peer) => boolean;
      log: (level: LogLevel, text: string) => void;
    },
    private readonly start: (kind: SenderKind) => void,
    into: TcpListener[],
  ) {
    try {
      listenTokens(o, (i, t) => {
        this.contact ??= "windows";
        return new WindowsTokenExchange(t, (r) => (r.ok ? this.exchanged(i) : o.log("ERR", `token exchange on port ${o.plan.threads[i]!.port + o.offset} failed`)));
      }, into);
    } catch (e) {
      // A busy token port costs only the Windows sync senders; the Linux ones this receiver was asked for still work.
      o.log("DBG", `Windows sync senders not served: ${e instanceof Error ? e.message : String(e)}`);
    }
    void o.run.reached("a byte moved", this.waiting.signal).then((seen) => {
      if (seen && this.contact === undefined) this.begin("no sync");
    });
  }

  linuxContact(): void {
    this.contact ??= "linux";
  }

  stop(): void {
    this.waiting.abort();
  }

  private exchanged(thread: number): void {
    this.tokens.add(thread);
    if (this.contact !== "windows") return;
    const { run, plane } = this.o;
    const untokened = (run.since(run.originAt(0)).streams(plane) ?? []).some((x, i) => x.connections > 0 && !this.tokens.has(i));
    if (!untokened) this.begin("windows sync");
  }

  private begin(kind: SenderKind): void {
    if (this.started) return;
    this.started = true;
    this.stop();
    this.o.log("DBG", `${kind} sender: the test starts`);
    this.start(kind);
  }
}
