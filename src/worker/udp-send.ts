import { Slot } from "../counters.ts";
import type { Pacer } from "../pacer.ts";
import type { UdpSendSpec } from "../stream-spec.ts";
import type { UdpSocket } from "../net/types.ts";
import { nowMs, wallUs, type Runner, type StreamContext } from "./context.ts";
import { datagramCodecs, stampIperf2Frame } from "./datagram-formats.ts";
import { type DueFrame, FrameSchedule, type FramePart, frameParts, runAt } from "./frames.ts";
import { applyOptions, reportBuffers, senderPacer, type WorkerEnv } from "./sockets.ts";
import { SLICE_MS } from "./blocking-socket.ts";

const FIN_RESEND_MS = 10;
const FIN_GIVE_UP_MS = 2_000;
const HELLO_TIMEOUT_MS = 30_000;
/** An isochronous stream's state: its schedule, and the frame being sent. */
interface Frames {
  schedule: FrameSchedule;
  prevId: number;
  frame: DueFrame | undefined;
  parts: FramePart[];
  index: number;
}

/**
 * UDP sender on a connected socket, `sendMany` batches from preallocated datagrams. Datagrams carry a sequence
 * number and send time when the format has them; without one (format "none") every datagram is the same buffer.
 */
export class UdpSender implements Runner {
  private sock: UdpSocket | undefined;
  private readonly codec;
  private batch: (Uint8Array | number | string)[];
  /** Array entries per datagram in `batch`: 1 on a connected socket, 3 (data, port, host) on an adopted one. */
  private perPacket = 1;
  private readonly views: DataView[];
  /** The distinct datagram buffers `views` look at (a frame's datagrams are cut from them). */
  private readonly buffers: Uint8Array[];
  private frames: Frames | undefined;
  private pacer: Pacer | undefined;
  private seq = 0;
  private running = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reply: ((d: Uint8Array) => void) | undefined;
  /** With timeCalls: when the batch before ended (ms). */
  private sentAt: number | undefined;

  constructor(private readonly spec: UdpSendSpec, private readonly ctx: StreamContext, private readonly env: WorkerEnv) {
    this.codec = datagramCodecs[spec.format];
    const size = spec.datagramSize;
    const n = this.codec.headerBytes > 0 ? spec.batch : 1;
    const make = () => {
      const b = new Uint8Array(size).fill(spec.fill);
      if (spec.payload) b.set(spec.payload.subarray(0, size));
      return b;
    };
    const distinct = Array.from({ length: n }, make);
    this.batch = Array.from({ length: spec.batch }, (_, i) => distinct[i % n]!);
    this.views = distinct.map((b) => new DataView(b.buffer));
    this.buffers = distinct;
  }

  async open(): Promise<{ localPort?: number; fd?: number }> {
    const { spec } = this;
    const socket = {
      data: (_s: UdpSocket, d: Uint8Array, port: number, address: string) => {
        if (this.reply) this.reply(d);
        else this.ctx.event("datagram", new Uint8Array(d), { host: address, port });
      },
      error: () => {},
    };
    if (spec.adopt) {
      // Bun treats an adopted socket as unconnected: every datagram names the peer, so the batch carries it.
      const { host, port } = spec.adopt.peer;
      this.batch = this.batch.flatMap((b) => [b, port, host]);
      this.perPacket = 3;
      this.sock = await this.env.net.udpSocket({ fd: spec.adopt.fd, socket });
    } else {
      this.sock = await this.env.net.udpSocket({
        hostname: spec.bind?.host,
        port: spec.bind?.port,
        connect: { hostname: spec.connect.host, port: spec.connect.port },
        socket,
      });
    }
    applyOptions(this.env, this.sock.fd, spec.options);
    reportBuffers(this.env, this.ctx, this.sock.fd, spec.options);
    if (spec.hello) await this.handshake(spec.hello);
    return { localPort: this.sock.port, fd: this.sock.fd };
  }

  /** iperf3's UDP stream set-up: one hello datagram, then wait for the server's reply before any data. */
  private handshake(hello: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.reply = undefined;
        reject(new Error(`no reply to the UDP hello from ${this.spec.connect.host}:${this.spec.connect.port} within 30 s: check that the server is up and UDP is not filtered`));
      }, HELLO_TIMEOUT_MS);
      this.reply = (d) => {
        if (!this.spec.awaitReply) return;
        clearTimeout(t);
        this.reply = undefined;
        this.ctx.event("datagram", new Uint8Array(d));
        resolve();
      };
      this.sendOne(hello);
      if (!this.spec.awaitReply) {
        clearTimeout(t);
        this.reply = undefined;
        resolve();
      }
    });
  }

  go(): void {
    if (this.spec.timeCalls) this.sentAt = nowMs();
    // The bucket starts when sending does: made at open, it would fill while the peers set up, and its first burst
    // (two datagrams at once) is 12 % over a 1 Mbit/s, 32 KiB-datagram rate on a 2 s test.
    this.pacer = senderPacer(this.spec.rate, this.spec.datagramSize);
    this.running = true;
    this.ctx.touch();
    if (this.spec.frames) this.startFrames();
    else this.pump();
  }

  private startFrames(): void {
    const { c, o } = this.ctx;
    this.frames = { schedule: new FrameSchedule(this.spec.frames!, c, o, "period", wallUs()), prevId: 0, frame: undefined, parts: [], index: 0 };
    this.nextFrame();
  }

  /** The next frame: due at its slot (a late one skips the slots it missed), its size drawn, its datagrams cut. */
  private nextFrame = (): void => {
    this.timer = undefined;
    const fr = this.frames;
    if (!fr || !this.running) return;
    const { spec } = this;
    const { c, o } = this.ctx;
    if ((spec.limitBytes > 0 && c[o + Slot.bytes]! >= spec.limitBytes) || (spec.limitPackets > 0 && c[o + Slot.packets]! >= spec.limitPackets)) {
      void this.stop("limit");
      return;
    }
    const next = fr.schedule.next();
    if (!next) return;
    fr.prevId = fr.frame?.id ?? 0;
    fr.frame = next;
    fr.parts = frameParts(next.size, spec.datagramSize, spec.frames!.minBytes);
    fr.index = 0;
    runAt(next.atMs, this.sendFrame, (t) => (this.timer = t));
  };

  /** The frame's datagrams, in batches (one at a time with a gap between them); a full socket buffer resumes later. */
  private sendFrame = (): void => {
    this.timer = undefined;
    const fr = this.frames;
    if (!fr || !this.running || !this.sock) return;
    const { spec, codec, views, buffers } = this;
    const f = spec.frames!;
    const { c, o } = this.ctx;
    const peer = spec.adopt?.peer;
    while (fr.index < fr.parts.length) {
      let n = f.gapUs > 0 ? 1 : Math.min(buffers.length, fr.parts.length - fr.index);
      if (spec.limitBytes > 0) {
        // -n ends mid-frame: the datagram that reaches the amount is the last.
        let total = c[o + Slot.bytes]!;
        for (let i = 0; i < n; i++) {
          total += fr.parts[fr.index + i]!.length;
          if (total >= spec.limitBytes) n = i + 1;
        }
      }
      const us = wallUs();
      const out: (Uint8Array | number | string)[] = [];
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        const p = fr.parts[fr.index + i]!;
        codec.stamp(views[i]!, this.seq + 1 + i, us);
        stampIperf2Frame(views[i]!, f.fieldsAt, { periodUs: fr.schedule.periodUs, startUs: fr.schedule.startUs, prevId: fr.prevId, id: fr.frame!.id, frameSize: p.frameSize, remaining: p.remaining });
        out.push(buffers[i]!.subarray(0, p.length));
        if (peer) out.push(peer.port, peer.host);
      }
      let sent: number;
      try {
        sent = this.sock.sendMany(out);
      } catch {
        // A connected socket reports the peer's ICMP port-unreachable here; the frame goes on once it clears.
        c[o + Slot.sendErrors]!++;
        this.timer = setTimeout(this.sendFrame, 1);
        return;
      }
      for (let i = 0; i < sent; i++) bytes += fr.parts[fr.index + i]!.length;
      this.seq += sent;
      fr.index += sent;
      c[o + Slot.packets]! += sent;
      c[o + Slot.bytes]! += bytes;
      this.ctx.touch();
      if (sent < n) {
        c[o + Slot.sendErrors]! += n - sent;
        this.timer = setTimeout(this.sendFrame, 1);
        return;
      }
      if (spec.limitBytes > 0 && c[o + Slot.bytes]! >= spec.limitBytes) {
        void this.stop("limit");
        return;
      }
      if (f.gapUs > 0 && fr.index < fr.parts.length) {
        runAt(nowMs() + f.gapUs / 1000, this.sendFrame, (t) => (this.timer = t));
        return;
      }
    }
    fr.schedule.sent();
    this.nextFrame();
  };

  private timeSends(sent: number): void {
    const t = nowMs();
    const us = ((t - this.sentAt!) * 1000) / sent;
    for (let i = 0; i < sent; i++) this.ctx.latency(us);
    this.sentAt = t;
  }

  private pump = (): void => {
    this.timer = undefined;
    if (!this.running || !this.sock) return;
    const { c, o } = this.ctx;
    const { spec, codec, views } = this;
    const size = spec.datagramSize;
    const started = nowMs();
    // Send batches until the budget (one slice of work), then yield so stop messages get through.
    for (;;) {
      let n = spec.batch;
      if (spec.limitPackets > 0) n = Math.min(n, spec.limitPackets - c[o + Slot.packets]!);
      // With trimLast the whole datagrams go first, then one of what is left.
      const left = spec.limitBytes - c[o + Slot.bytes]!;
      const trimmed = spec.trimLast && left > 0 && left < size ? Math.max(left, codec.headerBytes) : 0;
      if (spec.limitBytes > 0) n = Math.min(n, trimmed > 0 ? 1 : spec.trimLast ? Math.floor(left / Math.max(1, size)) : Math.ceil(left / Math.max(1, size)));
      if (n <= 0) {
        void this.stop("limit");
        return;
      }
      if (this.pacer) {
        const t = nowMs();
        // Any credit lets one whole datagram go (the bucket goes into debt), as the pacer intends.
        const allowed = this.pacer.allowance(t, size);
        n = Math.min(n, allowed >= size ? Math.floor(allowed / Math.max(1, size)) : allowed > 0 ? 1 : 0);
        if (n <= 0) {
          this.timer = setTimeout(this.pump, Math.max(0, this.pacer.waitMs(t, size)));
          return;
        }
      }
      if (codec.headerBytes > 0) {
        const us = wallUs();
        for (let i = 0; i < n && i < views.length; i++) codec.stamp(views[i]!, this.seq + 1 + i, us);
      }
      let sent: number;
      try {
        const k = n * this.perPacket;
        if (trimmed > 0) sent = this.sock.sendMany([this.buffers[0]!.subarray(0, trimmed), ...this.batch.slice(1, this.perPacket)]);
        else sent = k === this.batch.length ? this.sock.sendMany(this.batch) : this.sock.sendMany(this.batch.slice(0, k));
      } catch {
        // A connected socket reports the peer's ICMP port-unreachable here; keep going, the receiver may come up.
        c[o + Slot.sendErrors]!++;
        this.timer = setTimeout(this.pump, 1);
        return;
      }
      this.seq += sent;
      if (this.sentAt !== undefined && sent > 0) this.timeSends(sent);
      const bytes = trimmed > 0 ? sent * trimmed : sent * size;
      c[o + Slot.packets]! += sent;
      c[o + Slot.bytes]! += bytes;
      this.pacer?.consume(bytes, sent);
      // Unsent datagrams are restamped with the next numbers in the next batch, so no gap is seen.
      if (sent < n) c[o + Slot.sendErrors]! += n - sent;
      // A refused batch means a full socket buffer: wait a little instead of spinning on it.
      if (sent < n) {
        this.ctx.touch();
        this.timer = setTimeout(this.pump, 1);
        return;
      }
      if (nowMs() - started > SLICE_MS) break;
    }
    this.ctx.touch();
    // Budget spent: let stop messages and timers through, then go on at once (a 0 ms timer waits about 1 ms).
    setImmediate(this.pump);
  };

  send(bytes: Uint8Array): void {
    this.sendOne(bytes);
  }

  private sendOne(bytes: Uint8Array, sock = this.sock): void {
    const peer = this.spec.adopt?.peer;
    if (peer) sock?.send(bytes, peer.port, peer.host);
    else sock?.send(bytes);
  }

  pause(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Ends the stream: its end marker first (the report a FIN brings back is part of it), then the end, for `reason`. */
  async stop(reason: "stopped" | "limit" = "stopped"): Promise<void> {
    if (!this.running && !this.sock) return;
    this.pause();
    const sock = this.sock;
    if (!sock) return;
    this.sock = undefined;
    await this.sendEndMarker(sock);
    sock.close();
    this.ctx.end(reason);
  }

  private async sendEndMarker(sock: UdpSocket): Promise<void> {
    const { spec } = this;
    const safe = (b: Uint8Array) => {
      try {
        this.sendOne(b, sock);
      } catch {
        // the peer is gone; nothing to tell it
      }
    };
    if (spec.endMarker === "zero-length-x3") {
      const empty = new Uint8Array(0);
      for (let i = 0; i < 3; i++) safe(empty);
      return;
    }
    if (spec.endMarker === "none") return;
    const fin = new Uint8Array(this.batch[0] as Uint8Array);
    const v = new DataView(fin.buffer);
    let finSeq = -(this.seq + 1);
    if (spec.endMarker === "iperf2-fin-once") {
      this.codec.stamp(v, finSeq, wallUs());
      safe(fin);
      return;
    }
    // The receiver answers a FIN with its report; resend until one arrives, as iperf 2 does.
    await new Promise<void>((resolve) => {
      const giveUp = setTimeout(() => done(), FIN_GIVE_UP_MS);
      const tick = setInterval(() => {
        this.codec.stamp(v, finSeq--, wallUs());
        safe(fin);
      }, FIN_RESEND_MS);
      const done = () => {
        clearTimeout(giveUp);
        clearInterval(tick);
        this.reply = undefined;
        resolve();
      };
      this.reply = (d) => {
        this.ctx.event("datagram", new Uint8Array(d));
        done();
      };
      this.codec.stamp(v, finSeq--, wallUs());
      safe(fin);
    });
  }
}
