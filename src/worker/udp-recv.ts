import { jitterStep } from "../formulas.ts";
import { Slot } from "../counters.ts";
import type { UdpRecvSpec, Endpoint } from "../stream-spec.ts";
import type { UdpSocket } from "../net/types.ts";
import { nowMs, wallUs, type Runner, type StreamContext } from "./context.ts";
import { datagramCodecs } from "./datagram-formats.ts";
import { applyOptions, reportBuffers, type WorkerEnv } from "./sockets.ts";
import { PeerFilter } from "./peer-filter.ts";
import { SLICE_MS, WAIT_MS, yieldThen } from "./blocking-socket.ts";
import { notNow, NAME_BYTES, type DatagramBatch } from "../sockopt/blocking-io.ts";
import { decodeSockaddr, encodeSockaddr, familyOf } from "../sockopt/sockaddr.ts";
import { SO_TIMESTAMPNS, SOL_SOCKET } from "../sockopt/constants.ts";

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
  /** Our duplicate of the socket while it is read in blocking mode (Bun's own is closed then). */
  private blockingFd: number | undefined;
  private batch: DatagramBatch | undefined;
  /**
   * iperf 2 times datagrams by the kernel's arrival stamp (its server's SO_TIMESTAMP), not by when a loop got to them
   * (13-30 µs later in Bun's loop on loopback, more under load): the stamp of the datagram being counted, in wall µs
   * (each its own in blocking mode; in Bun's loop, that of the last one its read took).
   */
  private readonly kernelStamps: boolean;
  private arrivalUs: number | undefined;

  constructor(private readonly spec: UdpRecvSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.codec = datagramCodecs[spec.format];
    this.filter = spec.allow && new PeerFilter(spec.allow, (line) => ctx.log(line));
    this.kernelStamps = spec.format === "iperf2" && env.sockopt !== undefined;
  }

  /** The kernel's arrival of what was last read from `fd` (a read of several: the last one's); the first call turns stamping on. */
  private stampFrom(fd: number | undefined): void {
    if (!this.kernelStamps || fd === undefined || fd < 0) return;
    const s = this.env.sockopt!.lastArrival(fd);
    this.arrivalUs = s === undefined ? undefined : s * 1e6;
  }

  async open(): Promise<{ localPort?: number; fd?: number }> {
    const { spec } = this;
    const socket = this.handlers;
    this.sock = spec.adopt
      ? await this.env.net.udpSocket({ fd: spec.adopt.fd, socket })
      : await this.env.net.udpSocket({ hostname: spec.listen.host, port: spec.listen.port, socket });
    applyOptions(this.env, this.sock.fd, spec.options);
    reportBuffers(this.env, this.ctx, this.sock.fd, spec.options);
    this.stampFrom(this.sock.fd);
    const localPort = this.sock.port;
    if (spec.adopt) {
      this.peer = spec.adopt.peer;
      if (spec.greeting) this.sock.send(spec.greeting, this.peer.port, this.peer.host);
    }
    this.tryBlocking();
    // In blocking mode the socket is read through our duplicate, Bun's own closed.
    return { localPort, fd: this.blockingFd ?? this.sock?.fd };
  }

  private readonly handlers = {
    data: (_s: UdpSocket, d: Uint8Array, port: number, address: string) => this.onDatagram(d, port, address),
    error: () => {},
  };

  private onDatagram(d: Uint8Array, port: number, address: string): void {
    if (this.filter && !this.filter.admits(address, port)) return;
    this.stampFrom(this.sock?.fd);
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
      // iperf3: the first datagram is the client's hello, answered and not counted, or the server's answer to ours.
      if (this.spec.helloReply) this.send(this.spec.helloReply, this.peer);
      this.ctx.event("connected", undefined, this.peer);
      if (this.spec.helloReply || this.spec.firstIsReply) return;
    }
    c[o + Slot.bytes]! += len;
    c[o + Slot.packets]!++;
    const now = nowMs();
    c[o + Slot.lastActivityMs] = now;
    // A receiver with a datagram count (Windows NTttcp -u -n) ends on the last one, as its peer's receiver does.
    if (this.spec.limitPackets > 0 && c[o + Slot.packets]! >= this.spec.limitPackets) this.ctx.end("limit");
    const codec = this.codec;
    if (codec.headerBytes === 0 || len < codec.headerBytes) return;
    const v = view ?? new DataView(d.buffer, d.byteOffset, len);
    const seq = codec.seq(v);
    if (seq < 0) {
      if (this.spec.endOn === "fin") this.ctx.event("fin", new Uint8Array(d.subarray(0, Math.min(len, 256))), { host: address, port });
      return;
    }
    const transit = (this.arrivalUs ?? wallUs()) - codec.sentUs(v);
    if (this.spec.timeTransit) this.ctx.latency(transit);
    if (!Number.isNaN(this.prevTransitUs)) {
      this.jitterUs = jitterStep(this.jitterUs, transit - this.prevTransitUs);
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
   * Alone on its Worker at open, with no allow-list to apply per datagram: the socket leaves Bun before it has read
   * anything (its loop would otherwise keep reading a busy socket, a JS callback per datagram, and never yield to this
   * one) and is read in slices with non-blocking recvmmsg batches and a bounded poll. Replies go out with sendto
   * meanwhile; when the Worker gets company the socket goes back to Bun.
   */
  private tryBlocking(): void {
    const fd = this.sock?.fd;
    const { io, sockopt } = this.env;
    if (this.blockingFd !== undefined || this.filter || !io || !sockopt || fd === undefined || fd < 0 || this.env.streamsHere() !== 1) return;
    this.batch ??= io.datagramBatch(BATCH, Math.max(this.spec.datagramSize, 1), this.kernelStamps);
    this.blockingFd = sockopt.dup(fd);
    // Our own reads take each datagram's stamp with it; Bun's reads must not get the message (release turns it off).
    if (this.kernelStamps) sockopt.setInt(this.blockingFd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
    this.sock!.close();
    this.sock = undefined;
    yieldThen(this.recvSlice);
  }

  private readonly recvSlice = (): void => {
    const io = this.env.io!;
    const fd = this.blockingFd;
    if (fd === undefined || this.ctx.ended) return;
    // Company is checked before any wait: a sender on this Worker must not wait out a blocking poll.
    if (this.env.streamsHere() > 1) return void this.release(fd).catch((e) => this.ctx.end("error", e));
    const b = this.batch!;
    const end = nowMs() + SLICE_MS;
    while (!this.ctx.ended) {
      const n = io.recvBatch(fd, b);
      if (n > 0) {
        for (let i = 0; i < n && !this.ctx.ended; i++) {
          if (this.kernelStamps) this.arrivalUs = b.arrivals[i] || undefined;
          const from = this.peer ?? decodeSockaddr(b.names.subarray(i * NAME_BYTES, (i + 1) * NAME_BYTES));
          this.count(b.views[i]!, b.lengths[i]!, from?.port ?? 0, from?.host ?? "", b.dataViews[i]);
        }
        if (nowMs() > end) break;
        continue;
      }
      if (!notNow(n) || nowMs() > end || !io.waitReadable(fd, WAIT_MS)) break;
    }
    if (this.ctx.ended || this.blockingFd === undefined) return;
    yieldThen(this.recvSlice);
  };

  /** Back to Bun's event loop (the fd is still non-blocking: every batch read says MSG_DONTWAIT). */
  private async release(fd: number): Promise<void> {
    this.blockingFd = undefined;
    // Bun's reads keep room for its own control messages only: ours would push them out.
    if (this.kernelStamps) this.env.sockopt!.setInt(fd, SOL_SOCKET, SO_TIMESTAMPNS, 0);
    this.sock = await this.env.net.udpSocket({ fd, socket: this.handlers });
  }

  send(bytes: Uint8Array, to?: Endpoint): void {
    const dest = to ?? this.peer;
    if (!dest) return;
    if (this.sock) return void this.sock.send(bytes, dest.port, dest.host);
    const family = familyOf(dest.host);
    if (this.blockingFd !== undefined && family) this.env.io!.sendTo(this.blockingFd, bytes, bytes.byteLength, encodeSockaddr(family, dest.host, dest.port));
  }

  stop(): Promise<void> {
    this.sock?.close();
    this.sock = undefined;
    if (this.blockingFd !== undefined) this.env.io?.close(this.blockingFd);
    this.blockingFd = undefined;
    this.ctx.end("stopped");
    return Promise.resolve();
  }
}
