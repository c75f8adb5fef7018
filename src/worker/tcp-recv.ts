import { Slot } from "../counters.ts";
import type { TcpRecvSpec } from "../stream-spec.ts";
import type { TcpListener, TcpSocket } from "../net/types.ts";
import { nowMs, openFds, type Runner, type StreamContext } from "./context.ts";
import { applyOptions, connectTcp, type WorkerEnv } from "./sockets.ts";

interface ConnState {
  closed: boolean;
}

/**
 * Bulk TCP receiver: counts bytes and never copies them. One stream is one listener (any number of connections, as
 * an ntttcp port thread), one adopted socket (iperf3/iperf data connection), or sockets it connects itself (reverse).
 */
export class TcpReceiver implements Runner {
  private listener: TcpListener | undefined;
  private readonly socks = new Set<TcpSocket<ConnState>>();
  private accepted = 0;
  private closedCount = 0;
  private stopped = false;

  constructor(private readonly spec: TcpRecvSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {}

  private readonly handlers = {
    open: (s: TcpSocket<ConnState>) => {
      if (this.listener && this.spec.connections > 0 && this.accepted >= this.spec.connections) {
        s.terminate();
        return;
      }
      s.data = { closed: false };
      this.accepted++;
      this.socks.add(s);
      this.ctx.c[this.ctx.o + Slot.connections]!++;
      try {
        applyOptions(this.env, s.fd, this.spec.options);
      } catch (e) {
        this.ctx.end("error", e);
      }
      this.ctx.touch();
    },
    data: (_s: TcpSocket<ConnState>, d: Uint8Array) => {
      const { c, o } = this.ctx;
      c[o + Slot.bytes]! += d.byteLength;
      c[o + Slot.packets]!++;
      c[o + Slot.lastActivityMs] = nowMs();
    },
    close: (s: TcpSocket<ConnState>) => {
      if (!s.data || s.data.closed) return;
      s.data.closed = true;
      this.socks.delete(s);
      this.closedCount++;
      this.ctx.c[this.ctx.o + Slot.closed]!++;
      const expected = this.spec.connections;
      if (this.spec.endOnEof && expected > 0 && this.closedCount >= expected) this.ctx.end(this.stopped ? "stopped" : "eof");
    },
    error: () => {},
  };

  async open(): Promise<{ localPort?: number }> {
    const { spec } = this;
    if (spec.adopt) {
      this.ctx.c[this.ctx.o + Slot.bytes]! += spec.adopt.pending;
      await this.env.net.connect({ fd: spec.adopt.fd, data: { closed: false }, socket: this.handlers });
      return {};
    }
    if (spec.connect) {
      for (let i = 0; i < spec.connections; i++) {
        await connectTcp(this.env, spec.connect, spec.bind, spec.options, { closed: false }, this.handlers);
      }
      return {};
    }
    if (!spec.listen) throw new Error("tcp-recv needs listen, connect or adopt");
    this.listener = this.env.net.listen({ hostname: spec.listen.host, port: spec.listen.port, data: { closed: false }, socket: this.handlers });
    return { localPort: this.listener.port };
  }

  go(): void {}

  tcpFds(): number[] {
    return openFds(this.socks);
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.listener?.stop(false);
    this.listener = undefined;
    for (const s of this.socks) s.terminate();
    this.ctx.end("stopped");
    return Promise.resolve();
  }
}
