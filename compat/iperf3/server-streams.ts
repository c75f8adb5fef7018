/**
 * One server test's data streams as they arrive: TCP connections that carried its cookie, UDP streams that said
 * hello while the test held the port's turn. Each is taken for a stream (a Worker's, or the main thread's own stream
 * host without libc), attached to the test's Test, and listed in its report.
 */
import { DataPlane } from "../../src/engine/data-plane.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import type { TcpSocket } from "../../src/net/types.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";
import { State } from "../../interop/iperf3/constants.ts";
import { IErrno } from "../../interop/iperf3/error-codes.ts";
import { Errno, errnoOfError } from "../../lib/errno.ts";
import { Iperf3ProtocolError, encodeState } from "../../interop/iperf3/framing.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import type { ServerSession } from "../../interop/iperf3/server-session.ts";
import type { LiveStream } from "./sampler.ts";
import type { Iperf3Server } from "./server.ts";
import { blankStream, plainAddress, sendsOn, type SideReport } from "./side.ts";
import { adoptedTcpSpec, onCpu, serverSendBlocks, serverUdpRecvSpec, serverUdpSendSpec } from "./stream-specs.ts";
import { handTcp } from "./tcp-hand-off.ts";
import type { Endpoint, UdpAcceptor, UdpTurnHolder } from "./udp-acceptor.ts";

/** What the streams need of their test. */
export interface StreamsOwner {
  server: Iperf3Server;
  session: ServerSession;
  params: TestParams;
  side: SideReport;
  run: TestRun;
  /** The client, as its control connection came from. */
  peer: Endpoint;
  /** The control connection's local address: where the client sends UDP when a stream has no address of its own. */
  controlLocal: string | undefined;
}

export class ServerStreams {
  private readonly live: Array<LiveStream | undefined> = [];
  /** Our senders' TCP_INFO duplicates: while one is open the connection is, whatever the Worker closed. */
  private readonly senderFds: number[] = [];
  private readonly opening: Array<Promise<void>> = [];
  /** While the test waits for or holds the UDP port's turn (its hellos come here). */
  private udpTurn?: UdpTurnHolder;
  /** The first data socket's congestion control (3.12's congestion_used). */
  congestion?: string;
  private closed = false;

  constructor(private readonly t: StreamsOwner) {}

  /** The streams opened so far, in acceptance order. */
  get streams(): LiveStream[] {
    return this.live.filter((s): s is LiveStream => s !== undefined);
  }

  /** PARAM_EXCHANGE is done: TCP streams come to the listening port; UDP ones once the test holds the port's turn. */
  listen(nowMs: number): void {
    if (this.t.params.protocol === "tcp") return this.t.session.listenerReady(nowMs);
    this.prepareUdp();
  }

  /**
   * Every stream has arrived: they are all open (or failed), and the next UDP test may take the port's turn. Only
   * after the current turn of the event loop: streams-ready fires inside acceptStream(), before the caller has made
   * the last stream's socket and queued its open; without libc that socket is a view of the port's catching socket,
   * which must not close before it is made.
   */
  async ready(): Promise<LiveStream[]> {
    await Promise.resolve();
    this.releaseUdpTurn();
    await Promise.allSettled(this.opening);
    return this.streams;
  }

  /**
   * UDP streams all use the server's port, each on its own socket connected to its client, as in 3.12. Hellos
   * carry no cookie, so this test first waits for the port's turn (UdpAcceptor), then asks for its streams.
   */
  private prepareUdp(): void {
    const turn: UdpTurnHolder = { hello: (from) => this.onUdpHello(from) };
    this.udpTurn = turn;
    this.t.server
      .udpAcceptor()
      .take(turn)
      .then(
        () => {
          if (this.udpTurn !== turn) return;
          this.t.session.listenerReady(performance.now());
        },
        (err: unknown) => {
          this.udpTurn = undefined;
          this.t.session.listenerFailed(IErrno.IESTREAMLISTEN, errnoOfError(err, Errno.EADDRINUSE), (err as Error).message);
        },
      );
  }

  private releaseUdpTurn(): void {
    if (!this.udpTurn) return;
    this.t.server.udpAcceptor().release(this.udpTurn);
    this.udpTurn = undefined;
  }

  /** A hello on the server port while this test holds the turn: the next stream, on a socket of its own. */
  private onUdpHello(from: Endpoint): void {
    // Another host's hello is not this client's stream (3.12 would take it; a stranger must not join a test).
    if (plainAddress(from.host) !== this.t.peer.host) return;
    const p = this.t.params;
    const got = this.t.session.acceptStream(performance.now());
    if (!got) return;
    const n = this.live.length;
    this.live.push(undefined);
    const sender = sendsOn(p, "server", n);
    const acceptor = this.t.server.udpAcceptor();
    let sock: ReturnType<UdpAcceptor["streamSocket"]>;
    try {
      sock = acceptor.streamSocket(from);
    } catch (e) {
      this.t.session.fail(new Iperf3ProtocolError(`cannot open a UDP stream socket: ${(e as Error).message}`, IErrno.IESTREAMACCEPT, errnoOfError(e, Errno.EIO)));
      return;
    }
    // A view has no address of its own: the client sends to the address its control connection reached.
    const local = (sock.local ? undefined : this.t.server.fd.localAddress(sock.fd)) ?? { host: this.t.controlLocal ?? acceptor.host, port: acceptor.port };
    const spec = sender ? serverUdpSendSpec(sock, from, p, serverSendBlocks(p, n)) : serverUdpRecvSpec(sock, from, { host: acceptor.host, port: acceptor.port }, p);
    this.open(n, spec, undefined, got.id, sender, { host: plainAddress(local.host), port: local.port }, { host: plainAddress(from.host), port: from.port });
  }

  /** A TCP data connection with our cookie (`pending` payload bytes read with it): taken for a stream. */
  addTcp(s: TcpSocket<unknown>, pending: number): void {
    const p = this.t.params;
    const got = this.t.session.acceptStream(performance.now());
    if (!got) {
      s.write(encodeState(State.ACCESS_DENIED));
      s.end();
      return;
    }
    const n = this.live.length;
    const sender = sendsOn(p, "server", n);
    const remote = { host: plainAddress(s.remoteAddress ?? ""), port: s.remotePort ?? 0 };
    let taken: ReturnType<typeof handTcp>;
    try {
      taken = handTcp(this.t.server.fd, s, p);
    } catch (e) {
      this.t.session.fail(e instanceof Iperf3ProtocolError ? e : new Iperf3ProtocolError(`cannot hand the data connection to a worker: ${(e as Error).message}`, IErrno.IESTREAMACCEPT, Errno.EIO));
      return;
    }
    const { handed, info, local, congestion, sockBuf } = taken;
    this.congestion ??= congestion;
    this.t.side.start.sockBufs.push(sockBuf);
    // Only a sender's TCP_INFO is read (retransmits, cwnd); a receiver's duplicate is not needed past the start.
    const infoFd = sender ? info : undefined;
    if (infoFd !== undefined) this.senderFds.push(infoFd);
    if (!sender && info !== undefined) this.t.server.fd.close(info);
    this.live.push(undefined);
    const spec = adoptedTcpSpec(sender ? "send" : "recv", handed, pending, p, serverSendBlocks(p, n));
    this.open(n, spec, infoFd, got.id, sender, { host: plainAddress(local.host ?? this.t.server.listenHost), port: local.port }, remote);
  }

  /** Opens stream `n` on its own plane; once open it is attached to the Test and listed in the report. */
  private open(n: number, spec: StreamSpecInput, infoFd: number | undefined, id: number, sender: boolean, local: Endpoint, remote: Endpoint): void {
    const closeInfo = () => infoFd !== undefined && this.t.server.fd.close(infoFd);
    const opened = DataPlane.open([onCpu(spec, this.t.params.serverAffinity ?? this.t.server.plan.affinity)], { joinsTest: n > 0 }).then(
      (plane) => {
        if (this.closed) {
          closeInfo();
          return void plane.stop();
        }
        this.add(n, plane, infoFd, id, sender, local, remote);
      },
      (err: unknown) => {
        closeInfo();
        this.t.session.fail(new Iperf3ProtocolError(`data stream failed: ${(err as Error).message}`, IErrno.IESTREAMACCEPT, errnoOfError(err, Errno.EIO)));
      },
    );
    this.opening.push(opened);
  }

  private add(n: number, plane: DataPlane, infoFd: number | undefined, id: number, sender: boolean, local: Endpoint, remote: Endpoint): void {
    const report = blankStream(id, 5 + 2 * n, sender);
    Object.assign(report, { localHost: local.host, localPort: local.port, remoteHost: remote.host, remotePort: remote.port });
    this.live[n] = { report, plane, index: 0, tcpInfo: infoFd !== undefined };
    this.t.run.attach(plane, sender ? "send" : "recv");
    if (infoFd !== undefined && this.t.server.fd.sockopt) this.t.run.readTcpInfo(plane, 0, infoFd, this.t.server.fd.sockopt);
    this.t.side.start.connected.push({ socket: report.socket, localHost: local.host, localPort: local.port, remoteHost: remote.host, remotePort: remote.port });
  }

  /** Stops every stream (the stop runs in the background) and gives back the port's turn; the Test closes the TCP_INFO duplicates. */
  stop(): void {
    for (const s of this.live) if (s) void s.plane.stop();
    this.releaseUdpTurn();
  }

  /**
   * FIN on every connection we sent on, once its Worker stopped: 3.12 closes its data sockets at TEST_END, and a
   * 3.12 -R client, whose reads block after its TEST_END, drains them until EOF before it reads EXCHANGE_RESULTS.
   */
  finishSending(): void {
    for (const fd of this.senderFds) {
      try {
        this.t.server.fd.sockopt?.shutdownWrite(fd);
      } catch {
        // The client closed first: its EOF needs no FIN of ours.
      }
    }
  }

  /** The test is over: streams that open from now on are stopped at once. */
  close(): void {
    this.closed = true;
    this.stop();
  }
}
