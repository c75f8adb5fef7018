import { DataPlane } from "../engine/data-plane.ts";
import { TestRun } from "../engine/test-run.ts";
import { parseCidr } from "../access/cidr.ts";
import { receivers, senders } from "../plan-streams.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import type { TestRequest } from "./protocol/messages.ts";
import type { RemoteEnd } from "../report/result.ts";
import { halves, planOf, remoteEnd } from "./request.ts";
import { readTcpBufferCeilings } from "../host/link-buffers.ts";
import { socketBuffers } from "./socket-buffers.ts";
import { FlowWatch } from "../flows.ts";
import { ensureFdLimit, fdsNeeded } from "../host/fd-limit.ts";
import { BacklogWatch } from "../host/backlog-watch.ts";
import type { BacklogSeen } from "../host/backlog-seen.ts";
import { readLink } from "../host/link.ts";

/** What the server waits for in-flight data before it stops its receivers (as loopback does). */
function drainMs(req: TestRequest): number {
  return req.test !== "stream" ? 0 : req.transport === "udp" ? 200 : 2_000;
}

/**
 * The server's end of one native test: its data planes on the engine's Workers and a TestRun whose measured window
 * the client's clock cuts (window start/end arrive over the control connection).
 */
export class ServerTest {
  readonly run: TestRun;
  readonly createdMs = performance.now();
  private rx: DataPlane | undefined;
  private tx: DataPlane | undefined;
  private done = false;
  /** This process's RSS per flow: other tests running at the same time count in it. */
  private readonly flows: FlowWatch;
  /** Where this end sends a bulk test: its shaping qdisc toward the client, read over the window (the download's queue). */
  private backlog: BacklogWatch | undefined;
  private seen: BacklogSeen | undefined;

  constructor(
    readonly id: number,
    readonly req: TestRequest,
    readonly peer: { host: string; port: number },
  ) {
    this.run = new TestRun(
      { mode: "native", role: "server", peer: `${peer.host.includes(":") ? `[${peer.host}]` : peer.host}:${peer.port}`, transport: req.transport, test: req.test },
      { warmupS: req.warmupS, durationS: req.durationS, cooldownS: req.cooldownS, intervalS: 1 },
    );
    this.flows = new FlowWatch(req.streams);
  }

  /**
   * Opens this end's streams: receivers listen on `listenHost` and admit only the control connection's peer;
   * reversed senders connect to the client's listeners. Returns the ports the client connects to.
   */
  async prepare(listenHost: string, clientPorts: number[], sockopt: Sockopt | undefined): Promise<number[]> {
    const plan = planOf(this.req);
    const { sends, receives } = halves(this.req, "server");
    await ensureFdLimit(fdsNeeded(this.req.streams, this.req.test, { sends, receives }), `-P ${this.req.streams}`);
    if (receives) {
      this.rx = await this.keep(DataPlane.open(receivers(plan, { host: listenHost, canSetOptions: sockopt !== undefined, allow: [parseCidr(this.peer.host)] })));
      this.run.attach(this.rx, this.req.test === "stream" ? "recv" : "server");
    }
    if (sends) {
      const opening = DataPlane.open(senders(plan, { host: this.peer.host, ports: clientPorts })).catch((e: Error) => {
        // What the client's user can act on: its own host must let the server connect back.
        throw new Error(`could not connect back to ${this.peer.host} for -R/--bidir (${e.message}): let this server reach the client's ephemeral ports, or drop -R/--bidir`);
      });
      this.tx = await this.keep(opening);
      this.run.attach(this.tx, "send");
      if (this.req.test === "stream") this.backlog = new BacklogWatch(readLink(this.peer.host).interface);
    }
    return this.rx ? this.rx.localPorts.map((p) => p!) : [];
  }

  /** A plane that finished opening after the test was stopped (the client left meanwhile) is stopped at once. */
  private async keep(opening: Promise<DataPlane>): Promise<DataPlane> {
    const plane = await opening;
    if (!this.done) return plane;
    await plane.stop();
    throw new Error("the client left while the test was set up");
  }

  go(): void {
    if (this.req.warmupS > 0) this.run.beginWarmup();
    this.tx?.go();
  }

  window(edge: "start" | "end"): void {
    if (edge === "start" && this.run.phase !== "measuring") this.run.beginMeasuring();
    if (edge === "start") this.backlog?.start();
    if (edge === "end") this.seen = this.backlog?.stop();
    if (edge === "end") this.flows.measured();
    // With -n the client's window ends when its last byte left; ours ends when it has landed (finish drains first).
    if (edge === "end" && this.req.bytes > 0 && this.rx && this.req.test === "stream") return;
    if (edge === "end" && this.run.phase === "measuring") this.run.endMeasuring();
  }

  /** The client's senders stopped: stop ours, let in-flight bytes land, stop the rest and report. */
  async finish(): Promise<RemoteEnd> {
    await this.tx?.stop();
    if (this.rx) await Promise.race([this.rx.ended, new Promise((r) => setTimeout(r, drainMs(this.req)))]);
    await this.stop();
    const buffers = socketBuffers(this.req.windowBytes, { send: this.tx, recv: this.rx });
    const r = this.run.results();
    const end = remoteEnd({ ...r, ...(buffers ? { socket_buffers: buffers } : {}), flows: this.flows.figures(r.streams) }, readTcpBufferCeilings());
    return this.seen ? { ...end, qdisc: this.seen } : end;
  }

  /** Ends everything without a report (client gone, refused, server closing). */
  async stop(): Promise<void> {
    if (this.done) return;
    this.done = true;
    this.seen ??= this.backlog?.stop();
    await Promise.all([this.tx?.stop(), this.rx?.stop()]);
    this.run.finish();
  }
}
