import { hostname, release, type } from "node:os";
import { DataPlane } from "../../src/engine/data-plane.ts";
import { TestRun } from "../../src/engine/test-run.ts";
import type { Net, TcpListener, TcpSocket } from "../../src/net/types.ts";
import { loadHandOff, type HandOff } from "../../src/net/hand-off.ts";
import { peerText } from "../../src/access/peer-text.ts";
import { RefusalLog } from "../../src/access/refusal-log.ts";
import { POLICY_FLAGS, busyMessage, peerAllowed, policyLimits, type ServerPolicy } from "../../src/access/server-policy.ts";
import { LinuxSyncReceiver } from "../../interop/ntttcp/linux-sync-receiver.ts";
import { WINDOWS_TOKEN_PORT_OFFSET, WindowsTokenExchange } from "../../interop/ntttcp/windows-token.ts";
import { UserError, explainSocketError } from "../../src/errors.ts";
import { loadNet } from "../../src/net/net.ts";
import type { EmbedOptions, ServerHandle } from "../../src/net/server-handle.ts";
import type { Transport } from "../../interop/ntttcp/transport.ts";
import { listenControl, type ControlHandlers } from "./control.ts";
import { hostFigures } from "./host-figures.ts";
import { linuxLogLine, linuxResultMessages } from "./linux-console.ts";
import type { LogLevel } from "./run.ts";

/**
 * The ntttcp receiver as `anyperf serve` runs it: unlike `ntttcp -r`, which is one test laid out by its own command
 * line, it serves test after test, from any sender that comes, in every start mode at once
 * (docs/protocols/ntttcp-interop.md §5.2: a contact on base−1 is a Linux sync sender, one on data port + 1000 a Windows
 * sync sender, data bytes before any contact a no-sync sender). A test is one peer host's connections: it starts at the
 * Linux 'R' or, otherwise, at the first data byte; it ends at the negotiated cycle (Linux sync) or when the sender has
 * closed every connection. TCP only: ntttcp's UDP senders name no test on the wire, and iperf 2 owns UDP 5001.
 */

/** ntttcp-for-linux's default -P: a sender's ports base … base+15 are all served (Windows: up to 16 threads). */
export const SERVE_PORTS = 16;
/** A data connection silent this long after its test started is closed (a vanished sender frees its Worker). */
const IDLE_MS = 60_000;
/** Tests from different senders at once, unless --max-tests says otherwise: each holds a TestRun and its sampler. */
const DEFAULT_MAX_TESTS = 64;
/** A test that has not started this long after its first contact is given up (an idle sync or data connection). */
const START_DEADLINE_MS = 60_000;
/** A sync connection's receiver keeps answering a late 'E' this long after its test ended. */
const SYNC_LINGER_MS = 2_000;

export interface NtttcpServeOptions {
  host: string;
  /** Base data port B (sync on B−1, tokens on B+tokenOffset…). */
  port: number;
  tokenOffset: number;
  net: Net;
  /** Where the base port's connections come from when another server shares it (serve's port mux). */
  baseNet?: Net;
  /** How an accepted data connection reaches its stream: a dup()ed fd for a Worker, or locally without libc. */
  handOff: HandOff;
  policy: ServerPolicy;
  print(line: string): void;
}

/** The receiver inside another process (`anyperf serve`); `o.port` is the base data port. */
export async function startNtttcpServer(o: EmbedOptions & Pick<NtttcpServeOptions, "baseNet"> & { tokenOffset?: number }): Promise<ServerHandle> {
  const [net, handOff] = await Promise.all([loadNet(), loadHandOff()]);
  const svc = new NtttcpServe({
    host: o.host ?? "0.0.0.0",
    port: o.port,
    tokenOffset: o.tokenOffset ?? WINDOWS_TOKEN_PORT_OFFSET,
    net,
    baseNet: o.baseNet,
    handOff,
    policy: o.policy,
    print: (line) => o.sink(`${line}\n`),
  });
  svc.start();
  return { port: o.port, close: async () => svc.close() };
}

type Peer = { host: string | undefined; port: number | undefined };

interface DataConn {
  test: ServeTest | undefined;
  pending: number;
  handed: boolean;
}

/** One sender's test (one peer host). */
class ServeTest {
  readonly run: TestRun;
  readonly planes = new Set<DataPlane>();
  sync: LinuxSyncReceiver | undefined;
  started = false;
  ended = false;
  /** The negotiated Linux cycle, seconds (0 = until the sender stops). */
  cycleS = 0;
  /** Data connections accepted into this test (--max-streams), handed to a Worker or about to be. */
  accepted = 0;
  /** Aborted when the test starts or ends: a wait for its first byte is over. */
  private readonly waiting = new AbortController();
  /** Before the start: the start deadline; after it: the end of the cycle or of --max-duration. */
  private timer: ReturnType<typeof setTimeout>;
  private connections = 0;

  constructor(
    private readonly svc: NtttcpServe,
    readonly peer: string,
    /** How the sender started it; a Windows sync sender's test begins as "no sync" until its first token contact. */
    public mode: "linux sync" | "windows sync" | "no sync",
  ) {
    this.run = new TestRun({ mode: "ntttcp", role: "receiver", peer, transport: "tcp", test: "stream" }, { warmupS: 0, durationS: 0, cooldownS: 0, intervalS: 1 }, { endsAtLastByte: true });
    // No-sync and Windows senders write once all their connections exist: the first byte starts the window.
    if (mode !== "linux sync") void this.run.reached("a byte moved", this.waiting.signal).then((seen) => seen && this.start(0));
    this.timer = setTimeout(() => this.end(), START_DEADLINE_MS);
  }

  add(plane: DataPlane): void {
    this.connections++;
    this.planes.add(plane);
    this.run.attach(plane, "recv");
    void plane.ended.then(() => {
      this.planes.delete(plane);
      // Every connection gone: the test is over (one that never started too, unless its sync connection is still up).
      if (this.planes.size === 0 && (this.started || !this.sync)) this.end();
    });
  }

  /** The window opens; `cycleS` > 0 closes it on our clock (Linux sync), else the senders' closes do. */
  start(cycleS: number): void {
    if (this.started || this.ended) return;
    this.started = true;
    this.waiting.abort();
    clearTimeout(this.timer);
    this.run.beginMeasuring();
    const max = policyLimits(this.svc.opts.policy).maxDurationS;
    const limit = Math.min(cycleS > 0 ? cycleS : Infinity, max ? max.value : Infinity);
    if (limit < Infinity) this.timer = setTimeout(() => this.end(), limit * 1000);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.waiting.abort();
    clearTimeout(this.timer);
    this.sync?.finish();
    if (this.started) this.report();
    this.run.finish();
    for (const p of this.planes) void p.stop();
    this.svc.forget(this);
  }

  private report(): void {
    this.run.endMeasuring();
    const doc = this.run.results();
    const seconds = doc.phases.measured_s;
    const bytes = doc.streams.reduce((n, s) => n + s.bytes, 0);
    const say = (level: LogLevel, text: string) => this.svc.opts.print(linuxLogLine(new Date(), level, text));
    say("INFO", `test from ${this.peer} (${this.mode}, ${this.connections} connections) done`);
    const results = {
      role: "receiver" as const,
      protocol: "tcp" as const,
      seconds,
      threads: [],
      totalBytes: bytes,
      connections: this.connections,
      host: hostFigures(doc.cpu.host, { protocol: "tcp" }),
      computerName: hostname(),
      os: `${type()} ${release()}`,
    };
    for (const m of linuxResultMessages(results, { verbose: false, showTcpRetrans: false, showNicPackets: false, showDevInterrupts: false })) say(m.level, m.text);
  }
}

export class NtttcpServe {
  private readonly listeners: TcpListener[] = [];
  private readonly tests = new Map<string, ServeTest>();
  private readonly refusals: RefusalLog;

  constructor(readonly opts: NtttcpServeOptions) {
    this.refusals = new RefusalLog((line) => opts.print(`ntttcp: ${line}`));
  }

  /** Binds base−1, the data ports and the token ports; throws the first bind error (the caller names the flag). */
  start(): void {
    const { opts } = this;
    const bind = (port: number, listen: () => TcpListener) => {
      try {
        this.listeners.push(listen());
      } catch (e) {
        this.close();
        throw explainSocketError(e, { host: opts.host, port, role: "listen" });
      }
    };
    const admit = (p: Peer) => this.admit(p.host, p.port);
    const sync = opts.port - 1;
    bind(sync, () => listenControl(opts.net, opts.host, sync, (t, p) => this.syncContact(t, p), admit));
    for (let i = 0; i < SERVE_PORTS; i++) {
      const data = opts.port + i;
      const token = data + opts.tokenOffset;
      bind(data, () => this.listenData(i === 0 && opts.baseNet ? opts.baseNet : opts.net, data));
      bind(token, () => listenControl(opts.net, opts.host, token, (t, p) => this.tokenContact(t, p), admit));
    }
  }

  close(): void {
    for (const l of this.listeners) l.stop(true);
    this.listeners.length = 0;
    for (const t of [...this.tests.values()]) t.end();
  }

  /** @internal */
  forget(t: ServeTest): void {
    if (this.tests.get(t.peer) === t) this.tests.delete(t.peer);
    const sync = t.sync;
    if (sync) setTimeout(() => sync.closeAll(), SYNC_LINGER_MS);
  }

  private admit(host: string | undefined, port: number | undefined): boolean {
    if (peerAllowed(host, this.opts.policy)) return true;
    this.refusals.refused(`refused ${peerText(host, port)}: not in --allow`);
    return false;
  }

  /**
   * The peer's running test, or a new one; undefined when --max-tests (default 64) tests run already: the caller
   * closes the connection (ntttcp has no way to say no).
   */
  private testFor(peer: string, mode: ServeTest["mode"], port: number | undefined): ServeTest | undefined {
    const t = this.tests.get(peer);
    if (t && !t.ended) return t;
    const max = policyLimits(this.opts.policy).maxTests ?? { value: DEFAULT_MAX_TESTS, flag: POLICY_FLAGS.maxTests };
    if (this.tests.size >= max.value) {
      this.refusals.refused(`refused ${peerText(peer, port)}: ${busyMessage(max, this.tests.size)}`);
      return undefined;
    }
    const created = new ServeTest(this, peer, mode);
    this.tests.set(peer, created);
    return created;
  }

  private syncContact(t: Transport, from: Peer): ControlHandlers | null {
    const peer = from.host ?? "?";
    const existing = this.tests.get(peer);
    // A sync contact while this peer's no-sync test is still open: that test is over, a new one begins.
    if (existing && !existing.sync) existing.end();
    const test = this.testFor(peer, "linux sync", from.port);
    if (!test) return null;
    const say = (level: LogLevel, text: string) => this.opts.print(linuxLogLine(new Date(), level, text));
    test.sync ??= new LinuxSyncReceiver({ duration: 1, multiClient: false }, (e) => {
      if (e.type === "log") say(e.level, e.text);
      else if (e.type === "negotiated") {
        const max = policyLimits(this.opts.policy).maxDurationS;
        if (max && (e.cycle === 0 || e.cycle > max.value)) {
          // The sync protocol has no "no": the test ends and the sender sees its sync connection close.
          say("ERR", `refused the test from ${peer}: it asks for ${e.cycle === 0 ? "a continuous test" : `${e.cycle} s`}; this server allows ${max.value} s (${max.flag})`);
          test.end();
          test.sync?.closeAll();
        } else test.cycleS = e.cycle;
      } else if (e.type === "start") {
        // Its data connections were silent until now; on a shared base port they reach us with their first bytes.
        test.start(test.cycleS);
      }
      else if (e.type === "interrupted") test.end();
    });
    const c = test.sync.attach(t);
    return {
      onData: (b) => c.onData(b),
      onClose: () => {
        c.onClose();
        if (!test.started) test.end();
      },
    };
  }

  /** A Windows sync sender's data connections are silent until its token exchanges are done, then its bytes start the test. */
  private tokenContact(t: Transport, from: Peer): ControlHandlers | null {
    const test = this.testFor(from.host ?? "?", "windows sync", from.port);
    if (!test) return null;
    if (!test.started && !test.sync) test.mode = "windows sync";
    const x = new WindowsTokenExchange(t, () => {});
    queueMicrotask(() => x.start());
    return { onData: (b) => x.onData(b), onClose: () => x.onClose() };
  }

  private listenData(net: Net, port: number): TcpListener {
    return net.listen<DataConn>({
      hostname: this.opts.host,
      port,
      data: { test: undefined, pending: 0, handed: false },
      socket: {
        open: (s) => {
          s.data = { test: undefined, pending: 0, handed: false };
          if (!this.admit(s.remoteAddress, s.remotePort)) return s.end();
          const test = this.testFor(s.remoteAddress ?? "?", "no sync", s.remotePort);
          if (!test) return s.end();
          const max = policyLimits(this.opts.policy).maxStreams;
          if (max && test.accepted >= max.value) {
            this.refusals.refused(`refused ${peerText(s.remoteAddress, s.remotePort)}: its test has ${test.accepted} connections; this server allows ${max.value} (${max.flag})`);
            return s.end();
          }
          test.accepted++;
          s.data.test = test;
          // After this turn: bytes the shared port read before handing the connection over are counted first.
          queueMicrotask(() => void this.hand(s).catch((e: unknown) => this.opts.print(`ntttcp: dropped a connection from ${peerText(s.remoteAddress, s.remotePort)}: ${e instanceof Error ? e.message : String(e)}`)));
        },
        data: (s, d) => {
          if (!s.data.handed) s.data.pending += d.length;
        },
        error: () => {},
      },
    });
  }

  private async hand(s: TcpSocket<DataConn>): Promise<void> {
    const test = s.data.test;
    if (!test || test.ended) return void s.terminate();
    s.data.handed = true;
    const { fd, local } = this.opts.handOff.tcp(s as TcpSocket<unknown>);
    const plane = await DataPlane.open([
      { kind: "tcp-recv", id: 0, adopt: { fd, pending: s.data.pending, local }, endOnEof: true, idleTimeoutMs: IDLE_MS, connections: 1, readSize: 64 * 1024 },
    ]);
    if (test.ended) return void plane.stop();
    test.add(plane);
    plane.go();
  }
}
