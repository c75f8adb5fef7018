import { DataPlane } from "../../src/engine/data-plane.ts";
import type { TcpListener, TcpSocket } from "../../src/net/types.ts";
import type { Member, ReportGroup } from "./groups.ts";
import type { ClientPlan } from "./plan.ts";
import { defaultBuffers } from "../../src/host/socket-defaults.ts";
import type { ServerIo } from "./tcp-server.ts";
import { connectionLine, serverBanner } from "./text-report.ts";
import { connectionNotes, withInterface } from "./connection-notes.ts";
import { sleep } from "./waits.ts";

/** After our forward test, how long to wait for a -r/-d connect-back that has not arrived yet. */
const CONNECT_BACK_WAIT_MS = 5_000;

/**
 * The -r/-d listener: each connection the server opens back is adopted by a Worker and reported as its own stream,
 * in the forward test's group (-d) or in a group of its own (`group()`, -r).
 */
export class ConnectBackListener {
  private listener: TcpListener | undefined;
  private readonly planes: Promise<void>[] = [];
  private arrived = 0;
  private nextId: number;

  constructor(
    private readonly plan: ClientPlan,
    private readonly io: ServerIo,
    private readonly joined: ReportGroup | null,
    private readonly group: (key: string) => ReportGroup,
    firstId: number,
  ) {
    this.nextId = firstId;
  }

  start(): boolean {
    const { plan, io } = this;
    const port = plan.listenPort ?? plan.port;
    io.printer.info(...serverBanner({ port, udp: false, buffer: defaultBuffers.tcpRecv() }));
    try {
      this.listener = io.net.listen<{ handed: boolean }>({
        hostname: plan.bind?.host ?? (plan.ipv6 ? "::" : "0.0.0.0"),
        port,
        data: { handed: false },
        socket: { open: (s) => this.adopt(s), data: () => {}, error: () => {} },
      });
      return true;
    } catch {
      // What the stock client prints when -L collides (same host, default -L = -p): the test goes on one way.
      io.printer.info("listener bind failed: Address already in use");
      return false;
    }
  }

  private adopt(s: TcpSocket<{ handed: boolean }>): void {
    const { io, plan } = this;
    if (this.arrived >= plan.parallel) {
      s.terminate();
      return;
    }
    this.arrived++;
    const id = this.nextId++;
    const local = { host: plan.bind?.host ?? "0.0.0.0", port: s.localPort ?? 0 };
    const peer = { host: s.remoteAddress ?? "?", port: s.remotePort ?? 0 };
    const addr = (s.fd !== undefined ? io.sockopt?.localAddress(s.fd)?.host : undefined) ?? s.localAddress?.replace(/^::ffff:/, "");
    if (addr) local.host = addr;
    s.data = { handed: true };
    const adopt = io.handOff.tcp(s as TcpSocket<unknown>);
    // The stock client's connect-back reader is a server thread with the client's settings: --tcp-quickack re-arms it.
    const quickAck = plan.tcpQuickAck;
    const sock = adopt.local ? undefined : adopt.fd;
    io.printer.info(connectionLine(id, withInterface(local, plan.enhanced), peer, connectionNotes({ enhanced: plan.enhanced, sock, quickAck, at: new Date() })));
    const startMs = performance.now();
    this.planes.push(
      (async () => {
        const spec = { kind: "tcp-recv", id: 0, adopt: { ...adopt, pending: 0 }, endOnEof: true, idleTimeoutMs: 60_000, options: quickAck ? { quickAck } : {} } as const;
        const plane = await DataPlane.open([spec]);
        const g = this.joined ?? this.group(`back${id}`);
        const m: Member = { id: String(id), numericId: id, stream: { plane, index: 0 }, transport: "tcp", role: "recv", startMs, client: local, server: peer };
        g.add(m, this.joined === null);
        plane.onStreamEnd(() => g.ended(m));
        plane.go();
        await plane.ended;
      })().catch((e: unknown) => io.warn(`connection back from ${peer.host} port ${peer.port}: ${e instanceof Error ? e.message : String(e)}`)),
    );
  }

  /** Waits for the connect-backs: up to CONNECT_BACK_WAIT_MS for them to arrive, then until they end. */
  async finish(signal: AbortSignal): Promise<void> {
    const deadline = performance.now() + CONNECT_BACK_WAIT_MS;
    while (this.arrived < this.plan.parallel && performance.now() < deadline && !signal.aborted) await sleep(20, signal);
    await Promise.all(this.planes);
    this.listener?.stop(true);
  }
}
