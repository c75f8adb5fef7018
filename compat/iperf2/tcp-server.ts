import { DataPlane } from "../../src/engine/data-plane.ts";
import { explainSocketError } from "../../src/errors.ts";
import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";
import { versionString } from "../../interop/iperf2/client-header.ts";
import { digitsPayload } from "../../interop/iperf2/datagram.ts";
import { type ServerSend, type TcpServerTest, TcpServerSession } from "../../interop/iperf2/tcp-server-session.ts";
import { type Member, ReportGroup } from "./groups.ts";
import type { ServerPlan } from "./plan.ts";
import type { Printer } from "./printer.ts";
import { type Queued, SocketTransport, flushQueued, newQueued } from "./socket-transport.ts";
import { defaultBuffers } from "./socket-defaults.ts";
import { type Endpoint, clientBanner, connectionLine, serverBanner } from "./text-report.ts";

/** How long an accepted connection may take to show its header before we drop it. */
const HEADER_DEADLINE_MS = 10_000;
/** A receiving stream with no byte for this long is ended (a vanished client must not hold its Worker slot). */
const IDLE_MS = 60_000;

export interface ServerIo {
  net: Net;
  sockopt: Sockopt | undefined;
  printer: Printer;
  signal: AbortSignal;
  warn(text: string): void;
}

interface Conn extends Queued {
  session?: TcpServerSession;
  timer?: ReturnType<typeof setTimeout>;
  handed: boolean;
  acceptedMs: number;
}

/** The next transfer id; stock servers number every connection they accept or open, 1, 2, 3, ... */
export class Ids {
  private n = 0;
  next(): number {
    return ++this.n;
  }
}

function sendSpec(send: ServerSend): Omit<Extract<StreamSpecInput, { kind: "tcp-send" }>, "kind" | "id"> {
  const rate = send.rate > 0 ? (send.rateUnits === "pps" ? { packetsPerSecond: send.rate } : { bitsPerSecond: send.rate }) : {};
  return {
    payload: digitsPayload(send.writeSize),
    writeSize: send.writeSize,
    rate,
    limitBytes: send.amount.kind === "bytes" ? send.amount.bytes : 0,
    end: "fin-wait-eof",
  };
}

/**
 * `anyperf iperf -s` for TCP: accepts any number of connections at once; each one's header is read on the main
 * thread by TcpServerSession, then the socket is handed to a Worker (dup + adopt) for the data, and the -R / -d /
 * -r / --full-duplex traffic back to the client runs in Workers too.
 */
export class TcpServer {
  private listener: TcpListener | undefined;
  private readonly groups: ReportGroup[] = [];
  private readonly planes = new Set<DataPlane>();
  private tests = 0;
  private finished!: () => void;
  /** Resolves when the server should exit (-1 after its one client, or interrupted). */
  readonly done = new Promise<void>((r) => (this.finished = r));

  constructor(
    private readonly plan: ServerPlan,
    private readonly io: ServerIo,
    private readonly ids: Ids,
  ) {}

  start(): void {
    const { plan, io } = this;
    const host = plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0");
    io.printer.info(
      ...serverBanner({ port: plan.port, udp: false, buffer: plan.window ?? defaultBuffers.tcpRecv(), requested: plan.window, enhanced: plan.enhanced, pid: process.pid, readLen: plan.len ?? 128 * 1024 }),
    );
    try {
      this.listener = io.net.listen<Conn>({
        hostname: host,
        port: plan.port,
        data: { ...newQueued(), handed: false, acceptedMs: 0 },
        socket: {
          open: (s) => this.accept(s),
          data: (s, d) => s.data.session?.onData(d),
          drain: (s) => flushQueued(s),
          end: (s) => this.eof(s),
          close: (s) => this.eof(s),
          error: () => {},
        },
      });
    } catch (e) {
      throw explainSocketError(e, { host, port: plan.port, role: "listen" });
    }
    io.signal.addEventListener("abort", () => void this.stop(), { once: true });
  }

  async stop(): Promise<void> {
    this.listener?.stop(true);
    this.listener = undefined;
    await Promise.all([...this.planes].map((p) => p.stop()));
    for (const g of this.groups) g.close();
    this.finished();
  }

  private accept(s: TcpSocket<Conn>): void {
    s.data = { ...newQueued(), handed: false, acceptedMs: performance.now() };
    const session = new TcpServerSession(new SocketTransport(s), {
      test: (t) => {
        clearTimeout(s.data.timer);
        void this.run(s, t).catch((e: unknown) => this.io.warn(`test from ${s.remoteAddress}: ${e instanceof Error ? e.message : String(e)}`));
      },
      end: () => {},
      error: (e) => {
        clearTimeout(s.data.timer);
        this.io.warn(`dropped connection from ${s.remoteAddress} port ${s.remotePort}: ${e.message}`);
      },
    });
    s.data.session = session;
    s.data.timer = setTimeout(() => session.expire(), HEADER_DEADLINE_MS);
  }

  private eof(s: TcpSocket<Conn>): void {
    if (!s.data || s.data.handed) return;
    clearTimeout(s.data.timer);
    s.data.session?.onEof();
  }

  private local(s: TcpSocket<Conn>): Endpoint {
    const fd = s.fd;
    const addr = fd !== undefined ? this.io.sockopt?.localAddress(fd) : undefined;
    return { host: addr?.host ?? this.plan.bind?.host ?? "0.0.0.0", port: s.localPort ?? this.plan.port };
  }

  private group(host: string, expected: number): ReportGroup {
    const open = this.groups.find((g) => g.key === host && g.accepting);
    if (open) return open;
    const g = new ReportGroup(host, expected, this.io.printer, {
      format: this.plan.format,
      enhanced: this.plan.enhanced,
      csv: this.plan.csv,
      intervalS: this.plan.intervalS,
      epochZeroFinalCsv: true,
    });
    this.groups.push(g);
    // Finished groups are dropped so a long-running server does not grow.
    if (this.groups.length > 256) this.groups.splice(0, this.groups.findIndex((x) => !x.accepting) + 1);
    return g;
  }

  private async run(s: TcpSocket<Conn>, t: TcpServerTest): Promise<void> {
    const { io, plan } = this;
    const id = this.ids.next();
    const peer: Endpoint = { host: s.remoteAddress ?? "?", port: s.remotePort ?? 0 };
    const local = this.local(s);
    const r = t.request;
    const notes: string[] = [];
    if (r?.direction === "reverse") notes.push("(reverse)");
    if (r?.direction === "full-duplex") notes.push("(full-duplex)");
    if (plan.enhanced && r && r.version.high !== 0) notes.push(`(peer ${versionString(r.version)})`);
    io.printer.info(connectionLine(id, local, peer, notes));
    const group = this.group(peer.host, r?.numThreads ?? 1);
    if (s.fd === undefined || !io.sockopt) {
      io.warn("cannot hand the connection to a data Worker on this runtime (no socket fds): closing it");
      s.terminate();
      return;
    }
    // From here the socket belongs to Workers: duplicates of its fd for each direction.
    s.data.handed = true;
    s.data.session?.handOff();
    const fds = io.sockopt.handOff(s, r?.direction === "full-duplex" ? 2 : 1);
    const fdRecv = fds[0]!;
    const fdSend = fds[1] ?? fdRecv;
    const specs: StreamSpecInput[] = [];
    const receives = r?.direction !== "reverse";
    if (receives) specs.push({ kind: "tcp-recv", id: specs.length, adopt: { fd: fdRecv, pending: t.received }, endOnEof: true, idleTimeoutMs: IDLE_MS, connections: 1 });
    if (t.sendHere) specs.push({ kind: "tcp-send", id: specs.length, adopt: { fd: fdSend, pending: 0 }, ...sendSpec(t.sendHere), idleTimeoutMs: IDLE_MS });
    const plane = await DataPlane.open(specs);
    this.planes.add(plane);
    const startMs = s.data.acceptedMs;
    const member = (index: number, memberId: string, role: "send" | "recv"): Member => ({
      id: memberId,
      numericId: id,
      bytes: () => plane.snapshot().streams[index]!.bytes,
      calls: () => plane.snapshot().streams[index]!.packets,
      startMs,
      client: peer,
      server: local,
      role,
    });
    const members: Member[] = [];
    if (receives) members.push(member(0, String(id), "recv"));
    if (t.sendHere) members.push(member(receives ? 1 : 0, r?.direction === "full-duplex" ? `*${id}` : String(id), "send"));
    members.forEach((m, i) => group.add(m, i === 0));
    plane.onStreamEnd((stream) => group.ended(members[stream]!));
    plane.go();
    if (t.sendHere?.amount.kind === "time") {
      const sendIndex = specs.length - 1;
      const timer = setTimeout(() => plane.stopStream(sendIndex), t.sendHere.amount.seconds * 1000);
      void plane.ended.then(() => clearTimeout(timer));
    }
    if (t.connectBack?.when === "now") void this.connectBack(peer.host, local.host, t.connectBack, group);
    await plane.ended;
    this.planes.delete(plane);
    if (t.connectBack?.when === "after-eof") await this.connectBack(peer.host, local.host, t.connectBack, null);
    this.tests++;
    if (plan.singleClient && this.tests >= 1) void this.stop();
  }

  /** -d (now, same report group) and -r (after the forward test, its own report): we connect to the client's -L port. */
  private async connectBack(host: string, localHost: string, cb: ServerSend & { port: number }, joined: ReportGroup | null): Promise<void> {
    const { io } = this;
    const id = this.ids.next();
    io.printer.info(...clientBanner({ host, port: cb.port, udp: false, buffer: defaultBuffers.tcpSend() }));
    let plane: DataPlane;
    try {
      plane = await DataPlane.open([{ kind: "tcp-send", id: 0, connect: { host, port: cb.port }, ...sendSpec(cb), idleTimeoutMs: IDLE_MS }]);
    } catch (e) {
      io.warn(`connect back to ${host} port ${cb.port} failed: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    this.planes.add(plane);
    const startMs = performance.now();
    const local = { host: localHost, port: plane.localPorts[0] ?? 0 };
    const server = { host, port: cb.port };
    io.printer.info(connectionLine(`*${id}`, local, server, ["(reverse)"]));
    const group = joined ?? this.group(`${host}#back${id}`, 1);
    const m: Member = {
      id: `*${id}`,
      numericId: id,
      bytes: () => plane.snapshot().streams[0]!.bytes,
      calls: () => plane.snapshot().streams[0]!.packets,
      startMs,
      client: server,
      server: local,
      role: "send",
    };
    group.add(m, joined === null);
    plane.onStreamEnd(() => group.ended(m));
    plane.go();
    if (cb.amount.kind === "time") {
      const timer = setTimeout(() => plane.stopStream(0), cb.amount.seconds * 1000);
      void plane.ended.then(() => clearTimeout(timer));
    }
    await plane.ended;
    this.planes.delete(plane);
  }
}
