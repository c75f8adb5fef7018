import { Slot } from "../counters.ts";
import type { UdpRecvSpec, Endpoint } from "../stream-spec.ts";
import type { UdpSocket } from "../net/types.ts";
import { nowMs, wallUs, type Runner, type StreamContext } from "./context.ts";
import { datagramCodecs } from "./datagram-formats.ts";
import { applyOptions, type WorkerEnv } from "./sockets.ts";
import { PeerFilter } from "./peer-filter.ts";
import { SLICE_MS, WAIT_MS, yieldThen } from "./blocking-socket.ts";
import { EAGAIN, EINTR, type DatagramBatch } from "../sockopt/blocking-io.ts";

/** Datagrams per recvmmsg in the blocking loop. */
const BATCH = 64;

/**
 * UDP receiver: counts datagrams and bytes, and when the format carries them, tracks loss, reordering and RFC 1889
 * jitter the way iperf3 does (loss = sequence gaps, a late datagram repays one loss and counts as out of order).
 */
export class UdpReceiver implements Runner {
  private sock: UdpSocket | undefined;
  private readonly codec;
  private prevTransitUs = NaN;
  private jitterUs = 0;
  private peer: Endpoint | undefined;
  private readonly filter: PeerFilter | undefined;
  private blocking = false;
  private batch: DatagramBatch | undefined;

  constructor(private readonly spec: UdpRecvSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.codec = datagramCodecs[spec.format];
    this.filter = spec.allow && new PeerFilter(spec.allow, (line) => ctx.log(line));
  }

  async open(): Promise<{ localPort?: number }> {
    const { spec } = this;
    const socket = { data: (_s: UdpSocket, d: Uint8Array, port: number, address: string) => this.onDatagram(d, port, address), error: () => {} };
    this.sock = spec.adopt
      ? await this.env.net.udpSocket({ fd: spec.adopt.fd, socket })
      : await this.env.net.udpSocket({ hostname: spec.listen.host, port: spec.listen.port, socket });
    applyOptions(this.env, this.sock.fd, spec.options);
    if (spec.adopt) {
      this.peer = spec.adopt.peer;
      if (spec.greeting) this.sock.send(spec.greeting, this.peer.port, this.peer.host);
      this.tryBlocking();
    }
    return { localPort: this.sock.port };
  }

  private onDatagram(d: Uint8Array, port: number, address: string): void {
    if (this.filter && !this.filter.admits(address, port)) return;
    this.count(d, d.byteLength, port, address);
  }

  /**
   * One datagram of `len` bytes at the start of `d`. `view`, when given, is a DataView over `d` (the blocking loop's
   * preallocated one); otherwise one is made for stamped formats.
   */
  private count(d: Uint8Array, len: number, port: number, address: string, view?: DataView): void {
    const { c, o } = this.ctx;
    if (len === 0) {
      if (this.spec.endOn === "zero-length") this.ctx.end("marker");
      return;
    }
    if (this.peer === undefined) {
      this.peer = { host: address, port };
      // iperf3: the first datagram is the client's hello, answered and not counted.
      if (this.spec.helloReply) this.sock?.send(this.spec.helloReply, port, address);
      this.ctx.event("connected", undefined, this.peer);
      this.tryBlocking();
      if (this.spec.helloReply) return;
    }
    c[o + Slot.bytes]! += len;
    c[o + Slot.packets]!++;
    const now = nowMs();
    c[o + Slot.lastActivityMs] = now;
    const codec = this.codec;
    if (codec.headerBytes === 0 || len < codec.headerBytes) return;
    const v = view ?? new DataView(d.buffer, d.byteOffset, len);
    const seq = codec.seq(v);
    if (seq < 0) {
      if (this.spec.endOn === "fin") this.ctx.event("fin", new Uint8Array(d.subarray(0, Math.min(len, 256))), { host: address, port });
      return;
    }
    const transit = wallUs() - codec.sentUs(v);
    if (!Number.isNaN(this.prevTransitUs)) {
      const dd = Math.abs(transit - this.prevTransitUs);
      this.jitterUs += (dd - this.jitterUs) / 16;
      c[o + Slot.jitter] = this.jitterUs / 1e6;
    }
    this.prevTransitUs = transit;
    const max = c[o + Slot.maxSeq]!;
    if (seq > max) {
      if (seq > max + 1) c[o + Slot.lost]! += seq - 1 - max;
      c[o + Slot.maxSeq] = seq;
    } else {
      c[o + Slot.outOfOrder]!++;
      if (c[o + Slot.lost]! > 0) c[o + Slot.lost]!--;
    }
  }

  go(): void {}

  /**
   * Alone on its Worker, with the peer known and no allow-list to apply per datagram: read in slices with
   * non-blocking recvmmsg batches and a bounded poll, no event-loop turn or JS callback per datagram. Bun keeps the
   * socket (for replies and reports); whatever its loop reads between slices is counted the same way.
   */
  private tryBlocking(): void {
    const fd = this.sock?.fd;
    if (this.blocking || this.filter || !this.env.io || fd === undefined || fd < 0 || this.env.streamsHere() !== 1) return;
    this.blocking = true;
    this.batch ??= this.env.io.datagramBatch(BATCH, Math.max(this.spec.datagramSize, 1));
    yieldThen(this.recvSlice);
  }

  private readonly recvSlice = (): void => {
    const io = this.env.io!;
    const fd = this.sock?.fd;
    const peer = this.peer!;
    if (fd === undefined || fd < 0 || this.ctx.ended) return void (this.blocking = false);
    const b = this.batch!;
    const end = nowMs() + SLICE_MS;
    while (!this.ctx.ended) {
      const n = io.recvBatch(fd, b);
      if (n > 0) {
        for (let i = 0; i < n && !this.ctx.ended; i++) this.count(b.views[i]!, b.lengths[i]!, peer.port, peer.host, b.dataViews[i]);
        if (nowMs() > end) break;
        continue;
      }
      if ((n !== -EAGAIN && n !== -EINTR) || nowMs() > end || !io.waitReadable(fd, WAIT_MS)) break;
    }
    if (this.ctx.ended || !this.sock || this.env.streamsHere() > 1) return void (this.blocking = false);
    yieldThen(this.recvSlice);
  };

  send(bytes: Uint8Array, to?: Endpoint): void {
    const dest = to ?? this.peer;
    if (this.sock && dest) this.sock.send(bytes, dest.port, dest.host);
  }

  stop(): Promise<void> {
    this.sock?.close();
    this.sock = undefined;
    this.ctx.end("stopped");
    return Promise.resolve();
  }
}
