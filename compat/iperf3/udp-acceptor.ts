/**
 * The server's UDP port, shared the way 3.12 shares it: an unconnected socket on the port catches each stream's
 * hello, and every stream then gets a socket of its own, bound to the same port and connected to its client
 * (Sockopt.sharedUdpSocket), which the kernel gives that client's datagrams. Without libc (the local hand-off path:
 * Windows, macOS, musl) no second socket can bind the port, so a stream gets a view of the catching socket instead
 * (UdpPeerView): the catching socket passes each stream's datagrams to its view, by the client's address and port.
 * The hello carries no cookie, so tests take turns: one test at a time accepts UDP streams (from CREATE_STREAMS until
 * its last hello), and the others wait for their turn before they send CREATE_STREAMS. A turn is bounded by its
 * test's streams deadline.
 */
import type { Adopt } from "../../src/net/hand-off.ts";
import type { Net, UdpSocket } from "../../src/net/types.ts";
import { UdpPeerView } from "../../src/net/udp-peer-view.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import { replyToHello } from "../../interop/iperf3/udp.ts";

export interface Endpoint {
  host: string;
  port: number;
}

/** A test that wants UDP streams: hellos go to it while it holds the turn. */
export interface UdpTurnHolder {
  hello(from: Endpoint): void;
}

interface Waiting {
  holder: UdpTurnHolder;
  ready: () => void;
  failed: (e: unknown) => void;
}

export class UdpAcceptor {
  private current: UdpTurnHolder | undefined;
  private readonly queue: Waiting[] = [];
  private listener: UdpSocket | undefined;
  private opening: Promise<UdpSocket> | undefined;
  /** Without libc: the streams' views of the catching socket, by client address and port. */
  private readonly views = new Map<string, UdpPeerView>();

  constructor(
    private readonly net: Net,
    /** undefined on the local hand-off path. */
    private readonly sockopt: Sockopt | undefined,
    readonly host: string,
    readonly port: number,
  ) {}

  /** Resolves when `holder` holds the turn and the port catches hellos; rejects when the port cannot be bound. */
  take(holder: UdpTurnHolder): Promise<void> {
    return new Promise((ready, failed) => {
      this.queue.push({ holder, ready, failed });
      if (this.current === undefined && this.queue.length === 1) this.next();
    });
  }

  /** The holder has all its streams, or gave up (also when it was still waiting). */
  release(holder: UdpTurnHolder): void {
    const i = this.queue.findIndex((w) => w.holder === holder);
    if (i >= 0) this.queue.splice(i, 1);
    if (this.current !== holder) return;
    this.current = undefined;
    this.next();
  }

  /** One stream's socket on the port, toward `peer`: a connected duplicate for a Worker, else a view to hand off locally. */
  streamSocket(peer: Endpoint): Adopt {
    if (this.sockopt) return { fd: this.sockopt.sharedUdpSocket({ host: this.host, port: this.port }, peer), local: false };
    if (!this.listener || this.listener.closed) throw new Error("the server's UDP port is closed");
    const key = peerKey(peer);
    const view = new UdpPeerView(this.listener, peer, (v) => {
      if (this.views.get(key) === v) this.views.delete(key);
      if (this.current === undefined && this.queue.length === 0) this.closeListener();
    });
    this.views.set(key, view);
    return { fd: view.id, local: true };
  }

  /** Closes the catching socket (the server is stopping); tests still waiting are refused. */
  close(): void {
    for (const w of this.queue.splice(0)) w.failed(new Error("the server is stopping"));
    this.current = undefined;
    this.views.clear();
    this.closeListener();
  }

  private next(): void {
    const w = this.queue.shift();
    if (!w) {
      // Nobody waits: free the port's catching socket; the streams' own sockets keep theirs.
      this.closeListener();
      return;
    }
    this.current = w.holder;
    this.ensureListener().then(
      () => (this.current === w.holder ? w.ready() : undefined),
      (e: unknown) => {
        if (this.current === w.holder) this.current = undefined;
        w.failed(e);
        this.next();
      },
    );
  }

  private ensureListener(): Promise<UdpSocket> {
    if (this.listener && !this.listener.closed) return Promise.resolve(this.listener);
    this.opening ??= (async () => {
      const socket = { data: (_s: UdpSocket, d: Uint8Array, port: number, host: string) => this.onDatagram(d, { host, port }), error: () => {} };
      const sock = this.sockopt
        ? await this.net.udpSocket({ fd: this.sockopt.sharedUdpSocket({ host: this.host, port: this.port }), socket })
        : await this.net.udpSocket({ hostname: this.host, port: this.port, socket });
      this.listener = sock;
      return sock;
    })().finally(() => {
      this.opening = undefined;
      // Everyone left while it was opening.
      if (this.current === undefined && this.queue.length === 0) this.closeListener();
    });
    return this.opening;
  }

  private onDatagram(d: Uint8Array, from: Endpoint): void {
    const view = this.views.size > 0 ? this.views.get(peerKey(from)) : undefined;
    if (view) return view.deliver(d, from.port, from.host);
    // Only a hello opens a stream; late data of a finished stream, or a stranger's datagram, is dropped.
    if (!replyToHello(d)) return;
    this.current?.hello(from);
  }

  private closeListener(): void {
    // Closed once open, if still nobody wants it; views read through it until their streams end.
    if (this.opening || this.views.size > 0) return;
    this.listener?.close();
    this.listener = undefined;
  }
}

const peerKey = (p: Endpoint) => `${p.host}|${p.port}`;
