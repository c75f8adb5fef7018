import { DataPlane } from "../../src/engine/data-plane.ts";
import { explainSocketError } from "../../src/errors.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import { loadHandOff, type Adopt, type HandOff } from "../../src/net/hand-off.ts";
import { Errno } from "../../lib/errno.ts";
import type { ServerDataRun, ServerDataSetup } from "../../interop/netperf/data-setup.ts";
import { DEFAULT_LIMITS } from "../../interop/netperf/request-check.ts";
import { DEFAULT_SERVER_OPTIONS, NetserverSession, type ServerAction } from "../../interop/netperf/server-session.ts";
import { flushQueued, newQueued, SocketTransport, type Queued } from "../../src/net/write-queue.ts";
import { cpuStats } from "./cpu-stats.ts";
import { onlineCpus } from "../../src/host/sampler.ts";
import type { HostWindow } from "../../src/host/window.ts";
import type { TestRun } from "../../src/engine/test-run.ts";
import { defaultCongestion, effectiveBuffers, netperfPayload, serverCounters, serverSocketOptions, serverSpec, transportRetrans } from "./data-specs.ts";
import { NicRateReporter } from "./nic-rate.ts";
import { tcpInfoDump, wantsTcpInfoDump } from "./tcp-info-dump.ts";
import type { NetserverPlan } from "./plan.ts";
import { endPhase, peerName, phaseRun, phaseSide, type PhaseShape } from "./test-runs.ts";
import { busyMessage, peerAllowed, policyLimits, serverPolicy, type Limit, type ServerPolicy, type TestLimits } from "../../src/access/server-policy.ts";
import { peerText } from "../../src/access/peer-text.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import { timerDelay } from "../../src/timer-delay.ts";

/**
 * `anyperf netserver`: accepts netperf control connections, runs one NetserverSession per connection and carries
 * out its actions on the engine. Every test is independent; at most `maxTests` run at once (with -f, one at a
 * time, the others wait their turn).
 */

export interface NetserverIo {
  out(text: string): void;
  err(text: string): void;
  signal: AbortSignal;
  /** Called once the control port listens (a detaching netserver hands back to its shell here). */
  started?(): void;
}

interface Control extends Queued {
  test?: ServerTest;
}

/** Test slots: a cap on tests running at once, refusing (EBUSY) or queueing when full. */
class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(
    private readonly cap: number,
    private readonly queue: boolean,
  ) {}
  acquire(): Promise<boolean> {
    if (this.used < this.cap) {
      this.used++;
      return Promise.resolve(true);
    }
    if (!this.queue) return Promise.resolve(false);
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.used++;
        resolve(true);
      }),
    );
  }
  release(): void {
    this.used--;
    this.waiting.shift()?.();
  }
}

/** The errno netserver would have got from socket()/bind()/listen() for a data socket that could not be set up. */
function errnoOf(e: unknown): number {
  const code = (e as { code?: string } | null)?.code;
  const byCode: Record<string, number> = { EADDRINUSE: Errno.EADDRINUSE, EADDRNOTAVAIL: Errno.EADDRNOTAVAIL, EACCES: Errno.EACCES, EPERM: Errno.EPERM, EINVAL: Errno.EINVAL };
  return (code && byCode[code]) || Errno.EIO;
}

/** How long a data port the previous round used may stay busy before a rebind fails with EADDRINUSE. */
const REBIND_WINDOW_MS = 1000;

/** One control connection: its session and the data phase it asks for. */
class ServerTest {
  readonly session: NetserverSession;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private plane: DataPlane | undefined;
  private dataListener: TcpListener | undefined;
  private setup: ServerDataSetup | undefined;
  private buffers = { send: 0, recv: 0 };
  private holdsSlot = false;
  private reported = false;
  /** The host over the data phase until the test length, where the padded stop comes later (see start()). */
  private hostAtLength: HostWindow | undefined;
  private cpuTimer: ReturnType<typeof setTimeout> | undefined;
  private nic: NicRateReporter | undefined;
  /** The running data phase: the Test /status shows and netserver's counts and CPU are read from. */
  private run: TestRun | undefined;
  private shape: PhaseShape | undefined;

  constructor(
    private readonly server: NetserverServer,
    private readonly control: TcpSocket<Control>,
  ) {
    const transport = new SocketTransport(control);
    this.session = new NetserverSession(
      { write: (b) => transport.write(b), close: () => transport.close(), act: (a) => this.act(a) },
      server.sessionOptions,
      performance.now(),
    );
    this.schedule();
  }

  receive(bytes: Uint8Array): void {
    this.session.receive(bytes, performance.now());
    this.schedule();
  }

  closed(): void {
    this.session.controlClosed(performance.now());
    this.teardown();
  }

  /** One timer per session, always set to the session's next deadline. */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const at = this.session.nextDeadlineMs();
    if (at === undefined) return;
    this.timer = setTimeout(() => {
      this.session.tick(performance.now());
      this.schedule();
    }, timerDelay(at, performance.now()));
  }

  private act(a: ServerAction): void {
    switch (a.kind) {
      case "bind":
        void this.bind(a.setup);
        return;
      case "start":
        this.start(a.run);
        return;
      case "stop":
        void this.stopData();
        return;
      case "abort":
        this.reported = true;
        void this.stopData().then(() => this.teardown());
        return;
      case "log":
        if (this.server.plan.debug > 0) this.server.io.err(`netserver: ${this.peer()}: ${a.message}\n`);
        return;
    }
  }

  /** The client as refusal lines name it. */
  private peerName(): string {
    return peerText(this.control.remoteAddress, this.control.remotePort);
  }

  private peer(): string {
    return `${this.control.remoteAddress ?? "?"} port ${this.control.remotePort ?? 0}`;
  }

  private async bind(setup: ServerDataSetup): Promise<void> {
    this.setup = setup;
    if (this.overDuration(setup.testLengthS)) return;
    if (!(await this.server.slots.acquire())) {
      this.server.refusals.refused(`refused test from ${this.peerName()}: ${busyMessage(this.server.maxTests, this.server.maxTests.value)}`);
      this.session.dataFailed(Errno.EBUSY, performance.now());
      this.schedule();
      return;
    }
    this.holdsSlot = true;
    this.buffers = effectiveBuffers(setup.protocol, setup.sendBuffer, setup.recvBuffer);
    let port: number;
    try {
      if (setup.serverSends && !setup.serverReceives) port = this.listenForMaerts(setup);
      else {
        this.plane = await this.openPlane(setup);
        port = this.plane.localPorts[0] ?? setup.port;
      }
    } catch (e) {
      this.releaseSlot();
      this.act({ kind: "log", message: `data socket: ${e instanceof Error ? e.message : String(e)}` });
      this.session.dataFailed(errnoOf(e), performance.now());
      this.schedule();
      return;
    }
    this.session.dataBound({ port, recvBufSize: this.buffers.recv, sendBufSize: this.buffers.send }, performance.now());
    this.schedule();
  }

  /**
   * netperf -i asks every round for the data port the first round was given. The previous round's Worker releases
   * it on its own thread, so a bind that races that release is tried again for a moment before it counts as busy.
   */
  private async openPlane(setup: ServerDataSetup): Promise<DataPlane> {
    const reuse = setup.port !== 0 && setup.port === this.lastDataPort;
    for (const until = performance.now() + REBIND_WINDOW_MS; ; ) {
      try {
        const plane = await DataPlane.open([serverSpec(setup)]);
        this.lastDataPort = plane.localPorts[0];
        return plane;
      } catch (e) {
        const busy = (e as { code?: string } | null)?.code === "EADDRINUSE";
        if (!reuse || !busy || performance.now() > until) throw e;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }

  private lastDataPort: number | undefined;

  /** TCP_MAERTS: the server sends on the connection it accepts; the accepted socket is handed to a Worker. */
  private listenForMaerts(setup: ServerDataSetup): number {
    const { net, handOff } = this.server;
    this.dataListener = net.listen<{ taken: boolean }>({
      hostname: setup.bindAddress,
      port: setup.port,
      data: { taken: false },
      socket: {
        open: (s) => {
          if (this.maertsRun === undefined || this.plane) return s.terminate();
          const adopt = handOff.tcp(s as TcpSocket<unknown>);
          this.dataListener?.stop(false);
          this.dataListener = undefined;
          this.session.dataAccepted(performance.now());
          this.schedule();
          void this.startMaerts(adopt);
        },
        // The socket is handed over in open; Bun still insists on a data callback.
        data: () => {},
        error: () => {},
      },
    });
    return this.dataListener.port;
  }

  private maertsRun: ServerDataRun | undefined;

  private async startMaerts(adopt: Adopt): Promise<void> {
    const run = this.maertsRun!;
    try {
      const size = Math.max(1, run.sendSize);
      // The accepted socket takes the options the other tests' sockets take (it only sends: no receive buffer).
      const { recvBuffer: _, ...options } = serverSocketOptions(run.setup);
      this.plane = await DataPlane.open([
        { kind: "tcp-send", id: 0, adopt: { ...adopt, pending: 0 }, options, writeSize: size, payload: netperfPayload(size), limitBytes: run.setup.limitBytes, idleTimeoutMs: run.setup.idleTimeoutMs, end: "fin-wait-eof" },
      ]);
    } catch (e) {
      this.session.dataFailed(errnoOf(e), performance.now());
      this.schedule();
      return;
    }
    void this.plane.ended.then(() => this.report());
    this.attach(this.plane);
    this.plane.go();
  }

  /**
   * --max-duration: a longer timed test is refused at its request, before a data socket exists (netperf reports
   * remote error 22); an untimed one (-l -N, count mode) is ended at the limit once it runs (countLimit).
   */
  private overDuration(testLengthS: number): boolean {
    const max = this.server.limits.maxDurationS;
    if (!max || testLengthS <= max.value) return false;
    this.server.refusals.refused(`refused test from ${this.peerName()}: test asks for ${testLengthS} s; this server allows ${max.value} s (${max.flag})`);
    this.session.dataFailed(Errno.EINVAL, performance.now());
    this.schedule();
    return true;
  }

  private countLimit(run: ServerDataRun): void {
    const max = this.server.limits.maxDurationS;
    if (!max || run.testLengthS > 0) return;
    this.durationTimer = setTimeout(() => {
      this.server.io.err(`netserver: ended test from ${this.peerName()} after ${max.value} s: this server allows ${max.value} s (${max.flag})\n`);
      void this.stopData();
    }, max.value * 1000);
  }

  private durationTimer: ReturnType<typeof setTimeout> | undefined;

  private start(run: ServerDataRun): void {
    this.countLimit(run);
    const { setup } = run;
    this.run?.end();
    this.shape = { protocol: setup.protocol, sends: setup.serverSends, receives: setup.serverReceives, connectPerTransaction: setup.connectPerTransaction };
    // The client as its control connection shows it: the request's data address is often the wildcard.
    const peer = peerName(this.control.remoteAddress ?? setup.peer.address, this.control.remotePort ?? setup.peer.port);
    this.run = phaseRun("netserver", "server", peer, this.shape, run.testLengthS);
    // The client stops at the test length; the server's padded timer may run 4 s longer (TCP_CRR, lost UDP end
    // markers), so the CPU figure is the host over the Test's window until the length rather than the padded stop.
    if (setup.measureCpu && run.testLengthS > 0) {
      this.cpuTimer = setTimeout(() => (this.hostAtLength = this.run?.measured().host), timerDelay(run.testLengthS * 1000, 0));
    }
    // netserver prints nothing while it serves a test: the NIC table is our addition, asked for with -v 2.
    if (setup.protocol === "udp" && setup.serverReceives && !setup.serverSends && this.server.plan.verbosity > 1) {
      this.nic = new NicRateReporter((line) => this.server.io.out(line));
    }
    if (setup.serverSends && !setup.serverReceives) {
      this.maertsRun = run;
      return;
    }
    const plane = this.plane!;
    void plane.ended.then(() => this.report());
    this.attach(plane);
    plane.go();
  }

  /** The data phase starts: its plane joins the Test, whose window opens with it. */
  private attach(plane: DataPlane): void {
    if (this.run && this.shape) this.run.attach(plane, phaseSide(this.shape, "server"));
  }

  private async stopData(): Promise<void> {
    this.dataListener?.stop(true);
    this.dataListener = undefined;
    if (this.plane) await this.plane.stop();
    else if (!this.reported && this.setup) this.report();
  }

  private report(): void {
    if (this.reported || !this.setup) return;
    this.reported = true;
    clearTimeout(this.durationTimer);
    const setup = this.setup;
    // netserver's counts and CPU are the Test's window, which /status and /results show too.
    const phase = this.run && endPhase(this.run, this.plane);
    this.run = undefined;
    const c = phase?.counters;
    const retrans = transportRetrans({ protocol: setup.protocol, connectPerTransaction: setup.connectPerTransaction }, c);
    const info = this.plane?.lastTcpInfo(0);
    const end = this.plane?.socketBuffers(0);
    if (info && retrans !== -1 && wantsTcpInfoDump(process.env)) this.server.io.err(tcpInfoDump(info));
    const counts = c
      ? serverCounters(setup, c, this.maertsRun?.sendSize)
      : { bytesReceived: 0, recvCalls: 0, bytesSent: 0, sendCalls: 0, transactions: 0 };
    if (this.cpuTimer) clearTimeout(this.cpuTimer);
    const stats = setup.measureCpu ? cpuStats(this.hostAtLength ?? phase?.host) : undefined;
    const cpu = stats && { ...stats, peakCpuId: stats.peakId, peakCpuUtil: stats.peakUtil };
    this.nic?.finish();
    this.nic = undefined;
    this.session.dataEnded(
      {
        ...counts,
        // netserver reads its socket sizes again as the data phase ends (autotuning grows them): RSS/RSR_SIZE_END.
        recvBufSize: end?.recv ?? this.buffers.recv,
        sendBufSize: end?.send ?? this.buffers.send,
        transportRetrans: retrans,
        congestionName: setup.congestion ?? this.server.congestion,
        cpu,
      },
      performance.now(),
    );
    this.releaseSlot();
    this.reset();
    this.schedule();
  }

  /** Ready for the next DO_OMNI on the same connection (netperf -i). */
  private reset(): void {
    this.plane = undefined;
    this.setup = undefined;
    this.maertsRun = undefined;
    this.hostAtLength = undefined;
    this.reported = false;
  }

  private releaseSlot(): void {
    if (!this.holdsSlot) return;
    this.holdsSlot = false;
    this.server.slots.release();
  }

  teardown(): void {
    if (this.timer) clearTimeout(this.timer);
    clearTimeout(this.durationTimer);
    if (this.cpuTimer) clearTimeout(this.cpuTimer);
    this.nic?.finish();
    this.nic = undefined;
    this.dataListener?.stop(true);
    this.dataListener = undefined;
    this.reported = true;
    if (this.plane) void this.plane.stop();
    this.run?.end();
    this.run = undefined;
    this.releaseSlot();
  }
}

export class NetserverServer {
  readonly slots: Slots;
  readonly sessionOptions;
  readonly congestion = defaultCongestion();
  private listener: TcpListener | undefined;
  private readonly controls = new Set<TcpSocket<Control>>();
  readonly limits: TestLimits;
  readonly maxTests: Limit;
  readonly refusals: RefusalLog;

  private constructor(
    readonly plan: NetserverPlan,
    readonly io: NetserverIo,
    readonly net: Net,
    readonly handOff: HandOff,
    readonly policy: ServerPolicy,
  ) {
    this.limits = policyLimits(policy);
    // The global --max-tests and netserver's own are one option: main.ts takes it before netserver's parser sees it.
    this.maxTests = { value: policy.maxTests ?? plan.maxTests, flag: "--max-tests" };
    this.refusals = new RefusalLog((line) => io.err(`netserver: ${line}\n`));
    this.slots = new Slots(plan.serial ? 1 : this.maxTests.value, plan.serial);
    const cpus = onlineCpus();
    this.sessionOptions = {
      ...DEFAULT_SERVER_OPTIONS,
      limits: { ...DEFAULT_LIMITS, families: plan.family, cpuMeasurable: cpus !== undefined },
      passphrase: plan.passphrase,
      cpuCount: cpus ?? 1,
    };
  }

  static async start(plan: NetserverPlan, io: NetserverIo, policy: ServerPolicy = serverPolicy()): Promise<NetserverServer> {
    const [net, handOff] = await Promise.all([loadNet(), loadHandOff()]);
    const server = new NetserverServer(plan, io, net, handOff, policy);
    server.listen();
    return server;
  }

  get port(): number {
    return this.listener?.port ?? this.plan.port;
  }

  private listen(): void {
    const { plan } = this;
    const host = plan.listenAddress ?? (plan.family === "ipv4" ? "0.0.0.0" : "::");
    try {
      this.listener = this.net.listen<Control>({
        hostname: host,
        port: plan.port,
        data: newQueued(),
        socket: {
          open: (s) => {
            s.data = newQueued();
            // Outside --allow: closed before a byte is read.
            if (!peerAllowed(s.remoteAddress, this.policy)) {
              this.refusals.refused(`refused ${peerText(s.remoteAddress, s.remotePort)}: not in --allow`);
              s.end();
              return;
            }
            this.controls.add(s);
            s.data.test = new ServerTest(this, s);
          },
          data: (s, d) => s.data.test?.receive(d),
          drain: (s) => flushQueued(s),
          end: (s) => this.closed(s),
          close: (s) => this.closed(s),
          error: () => {},
        },
      });
    } catch (e) {
      throw explainSocketError(e, { host: plan.listenAddress ?? "any address", port: plan.port, role: "listen" });
    }
    const family = plan.family === "ipv4" ? "AF_INET" : plan.family === "ipv6" ? "AF_INET6" : "AF_UNSPEC";
    this.io.out(`Starting netserver with host '${plan.listenAddress ?? "IN(6)ADDR_ANY"}' port '${this.port}' and family ${family}\n`);
  }

  private closed(s: TcpSocket<Control>): void {
    if (!this.controls.delete(s)) return;
    s.data.test?.closed();
    s.end();
  }

  async stop(): Promise<void> {
    this.listener?.stop(true);
    this.listener = undefined;
    for (const s of this.controls) {
      s.data.test?.teardown();
      s.terminate();
    }
    this.controls.clear();
  }
}

/** Runs until the signal aborts (Ctrl+C). */
export async function runNetserver(plan: NetserverPlan, io: NetserverIo): Promise<number> {
  const server = await NetserverServer.start(plan, io);
  io.started?.();
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) return resolve();
    io.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await server.stop();
  return 0;
}
