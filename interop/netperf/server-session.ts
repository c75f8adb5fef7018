import { Direction, MsgType, NetFamily, OmniFlag, PAD_TIME_S, PROC_STAT_CPU_RATE, RESULTS_TYPE_WORD } from "./constants.ts";
import { Errno } from "../../lib/errno.ts";
import type { DataBound, ServerDataCounters, ServerDataRun, ServerDataSetup } from "./data-setup.ts";
import { FrameReader } from "./frame-reader.ts";
import {
  decodePassphrase,
  encodeCpuCalibrateReply,
  encodeStatusReply,
  encodeSysinfoReply,
  encodeUnknownRequestReply,
} from "./minor-messages.ts";
import { decodeOmniRequest, OmniRequest } from "./omni-request.ts";
import { decodeClassicStreamRequest, encodeClassicStreamResponse, encodeClassicStreamResults, type ClassicStreamRequest } from "./classic-stream.ts";
import { decodeCcRequest, encodeCcResponse, encodeCcResults, type CcRequest } from "./classic-cc.ts";
import { encodeOmniResponse } from "./omni-response.ts";
import { encodeOmniResults } from "./omni-results.ts";
import { checkOmniRequest, DEFAULT_LIMITS, type RequestLimits } from "./request-check.ts";
import { messageType } from "./words.ts";

/**
 * One netserver control connection (docs/protocols/netperf.md §2.5): requests in, replies out, data-plane actions for
 * the glue. It owns no socket and no clock: the glue pushes control bytes, data-plane events and the time, and carries
 * out actions.
 */

export type ServerAction =
  /** Create the data socket as described, bind it (listen for TCP) and call `dataBound` or `dataFailed`. */
  | { kind: "bind"; setup: ServerDataSetup }
  /** The setup reply is written: run the data phase, then call `dataEnded` (or `dataFailed`). */
  | { kind: "start"; run: ServerDataRun }
  /** End the data phase now and report with `dataEnded`. */
  | { kind: "stop"; reason: "timer" | "control-closed" }
  /** Tear the data phase down without results (the session is closing). */
  | { kind: "abort" }
  | { kind: "log"; message: string };

export interface ServerSessionIo {
  write(bytes: Uint8Array): void;
  /** Close the control connection. */
  close(): void;
  act(action: ServerAction): void;
}

export interface ServerSessionOptions {
  limits: RequestLimits;
  /** netserver -Z: the first message must be this passphrase or the connection is dropped without a reply. */
  passphrase?: string;
  passphraseTimeoutMs: number;
  /** Longest wait for a (complete) request while no test runs; netserver has none, a server must. */
  requestTimeoutMs: number;
  /** After a stop, how long the data plane may take to report before the session gives up. */
  stopGraceMs: number;
  /** Answer to CPU_CALIBRATE and cpu_rate when MEASURE_CPU is granted: CLK_TCK for /proc/stat. */
  cpuRate: number;
  cpuCount: number;
  /** Frames a client may send ahead while a test runs (stock netperf sends none). */
  maxQueuedFrames: number;
}

export const DEFAULT_SERVER_OPTIONS: ServerSessionOptions = {
  limits: DEFAULT_LIMITS,
  passphraseTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  stopGraceMs: 10_000,
  cpuRate: PROC_STAT_CPU_RATE,
  cpuCount: 1,
  maxQueuedFrames: 8,
};

export type ServerState = "passphrase" | "idle" | "binding" | "running" | "stopping" | "closed";

/**
 * How the test was asked for, and so answered: DO_OMNI, the classic DO_TCP_STREAM (TCP_MSS, TCP_SENDFILE) or
 * DO_TCP_CC (its request and response sizes only go back in the results' byte count).
 */
type Asked = { kind: "omni" } | { kind: "stream" } | { kind: "cc"; requestSize: number; responseSize: number; response?: Uint8Array };

interface Test {
  request: OmniRequest;
  asked: Asked;
  setup: ServerDataSetup;
  startMs: number;
  /** Pad added to the client's length (0 when the server only transmits). */
  padS: number;
  deadlineMs: number | undefined;
  timedOut: boolean;
  stopDeadlineMs: number | undefined;
}

export class NetserverSession {
  private readonly frames = new FrameReader();
  private readonly queue: Uint8Array[] = [];
  private stateValue: ServerState;
  private test: Test | undefined;
  private idleDeadlineMs: number;
  private lastReplyType = 0;

  constructor(
    private readonly io: ServerSessionIo,
    private readonly options: ServerSessionOptions,
    nowMs: number,
  ) {
    this.stateValue = options.passphrase !== undefined ? "passphrase" : "idle";
    this.idleDeadlineMs = nowMs + (options.passphrase !== undefined ? options.passphraseTimeoutMs : options.requestTimeoutMs);
  }

  get state(): ServerState {
    return this.stateValue;
  }

  private get closed(): boolean {
    return this.stateValue === "closed";
  }

  /** The next instant `tick` has something to do, for the glue's single timer. */
  nextDeadlineMs(): number | undefined {
    switch (this.stateValue) {
      case "passphrase":
      case "idle":
        return this.idleDeadlineMs;
      case "binding":
        return undefined;
      case "running":
        return this.test?.deadlineMs;
      case "stopping":
        return this.test?.stopDeadlineMs;
      case "closed":
        return undefined;
    }
  }

  receive(bytes: Uint8Array, nowMs: number): void {
    if (this.stateValue === "closed") return;
    for (const frame of this.frames.push(bytes)) {
      if (this.stateValue === "passphrase" || this.stateValue === "idle") this.handleFrame(frame, nowMs);
      else if (this.queue.length < this.options.maxQueuedFrames) this.queue.push(frame);
      else return this.fail("client sent too many requests during a test");
      if (this.closed) return;
    }
  }

  controlClosed(_nowMs: number): void {
    if (this.stateValue === "closed") return;
    if (this.stateValue === "running" || this.stateValue === "stopping" || this.stateValue === "binding") {
      this.io.act({ kind: "abort" });
    }
    this.shut();
  }

  dataBound(bound: DataBound, nowMs: number): void {
    const test = this.test;
    if (this.stateValue !== "binding" || !test) return;
    const { request: req, setup } = test;
    const rr = setup.serverReceives && setup.serverSends;

    let receiveSize = req.receiveSize;
    let recvWidth = req.recvWidth;
    if (setup.serverReceives) {
      if (rr) {
        receiveSize = req.requestSize;
        recvWidth = req.recvWidth === 0 ? 1 : req.recvWidth;
      } else {
        // netserver 2.7.0 takes a stream's request size, where netperf gave one (-r), as its receive size.
        if (req.requestSize > 0) receiveSize = req.requestSize;
        else if (req.receiveSize === -1) receiveSize = bound.recvBufSize > 0 ? bound.recvBufSize : 4096;
        recvWidth = req.recvWidth === 0 ? Math.max(2, Math.floor(bound.recvBufSize / receiveSize) + 1) : req.recvWidth;
      }
    }
    let sendSize = req.sendSize;
    let sendWidth = req.sendWidth;
    if (setup.serverSends) {
      if (rr) {
        sendSize = req.responseSize;
        sendWidth = req.sendWidth === 0 ? 1 : req.sendWidth;
      } else if (req.responseSize > 0) {
        // ...and its response size as the size of each send.
        sendSize = req.responseSize;
        sendWidth = req.sendWidth === 0 ? Math.max(2, Math.floor(bound.sendBufSize / sendSize) + 1) : req.sendWidth;
      } else {
        if (req.sendSize === -1) {
          sendSize = bound.sendBufSize > 0 ? bound.sendBufSize : 4096;
          if (setup.protocol === "udp") sendSize = Math.min(sendSize, 65507);
        }
        sendWidth = req.sendWidth === 0 ? Math.max(2, Math.floor(bound.sendBufSize / sendSize) + 1) : req.sendWidth;
      }
    }
    let flags = 0;
    if (setup.noDelay) flags |= OmniFlag.NO_DELAY;
    if (setup.measureCpu) flags |= OmniFlag.MEASURE_CPU;
    // A rate that is not a finite positive number (a hostile +Inf, NaN) is not echoed: ours is sent instead.
    const cpuRate = setup.measureCpu ? (Number.isFinite(req.cpuRate) && req.cpuRate > 0 ? req.cpuRate : this.options.cpuRate) : 0;
    if (test.asked.kind === "cc") {
      const response = encodeCcResponse({
        recvBufSize: bound.recvBufSize,
        noDelay: setup.noDelay ? 1 : 0,
        measureCpu: setup.measureCpu ? 1 : 0,
        sendBufSize: bound.sendBufSize,
        dataPort: bound.port,
        cpuRate,
        soRcvAvoid: req.soRcvAvoid,
        soSndAvoid: req.soSndAvoid,
      });
      test.asked.response = response;
      this.reply(response, MsgType.TCP_CC_RESPONSE);
    } else if (test.asked.kind === "stream") {
      this.reply(
        encodeClassicStreamResponse({
          recvBufSize: bound.recvBufSize,
          receiveSize,
          noDelay: setup.noDelay ? 1 : 0,
          measureCpu: setup.measureCpu ? 1 : 0,
          testLength: req.testLength,
          sendBufSize: bound.sendBufSize,
          dataPort: bound.port,
          cpuRate,
          soRcvAvoid: req.soRcvAvoid,
          soSndAvoid: req.soSndAvoid,
        }),
        MsgType.TCP_STREAM_RESPONSE,
      );
    } else this.reply(
      encodeOmniResponse({
        servErrno: 0,
        recvBufSize: bound.recvBufSize,
        receiveSize,
        recvWidth: clampI32(recvWidth),
        sendBufSize: bound.sendBufSize,
        sendSize,
        sendWidth: clampI32(sendWidth),
        flags,
        cpuRate,
        soRcvAvoid: req.soRcvAvoid,
        soSndAvoid: req.soSndAvoid,
        dataPort: bound.port,
        socketPrio: req.socketPrio,
        socketTos: req.socketTos,
      }),
      MsgType.OMNI_RESPONSE,
    );

    const timed = req.testLength > 0;
    // netserver pads its timer unless it only sends (docs/protocols/netperf.md §7.1): a sending-only server (TCP_MAERTS)
    // stops at the length, and stock netperf, reading until our close, ends then (with the pad it waited 4 s more).
    // The reported elapsed loses the pad when the padded timer ended the test.
    test.padS = setup.serverSends && !setup.serverReceives ? 0 : PAD_TIME_S;
    test.startMs = nowMs;
    test.deadlineMs = timed ? nowMs + (req.testLength + test.padS) * 1000 : undefined;
    this.stateValue = "running";
    this.io.act({
      kind: "start",
      run: {
        setup,
        receiveSize,
        sendSize,
        testLengthS: timed ? req.testLength : 0,
      },
    });
  }

  /**
   * Setup or data-phase failure: netserver answers with the errno and the child exits (docs/protocols/netperf.md §9).
   */
  /**
   * The client's data connection is accepted. netserver starts its timer after the accept; a sending-only test has
   * no pad, so its length counts from here (from the request, it ended before the client's own timer).
   */
  dataAccepted(nowMs: number): void {
    const test = this.test;
    if (this.stateValue !== "running" || test?.deadlineMs === undefined || test.padS !== 0) return;
    test.deadlineMs = nowMs + test.request.testLength * 1000;
  }

  dataFailed(errno: number, _nowMs: number): void {
    if (this.stateValue !== "binding" && this.stateValue !== "running" && this.stateValue !== "stopping") return;
    const asked = this.test?.asked.kind ?? "omni";
    const type = this.stateValue === "binding" || asked === "cc" ? responseType(asked) : asked === "stream" ? MsgType.TCP_STREAM_RESULTS : RESULTS_TYPE_WORD;
    if (this.stateValue !== "binding") this.io.act({ kind: "abort" });
    this.reply(encodeStatusReply(type, errno > 0 ? errno : Errno.EIO), type);
    this.shut();
  }

  dataEnded(counters: ServerDataCounters, nowMs: number): void {
    const test = this.test;
    if ((this.stateValue !== "running" && this.stateValue !== "stopping") || !test) return;
    let elapsed = (nowMs - test.startMs) / 1000;
    if (test.timedOut) elapsed = Math.max(0, elapsed - test.padS);
    const { setup } = test;
    const cpu = setup.measureCpu ? counters.cpu : undefined;
    const reportCong = setup.wantCongestionName && !setup.connectPerTransaction;
    if (test.asked.kind === "cc") {
      const { requestSize, responseSize, response } = test.asked;
      const t = u32(counters.transactions);
      this.reply(
        encodeCcResults(response ?? encodeCcResponse({}), {
          bytesReceived: u32(t * (requestSize + responseSize)),
          transReceived: t,
          elapsedTime: elapsed,
          cpuUtil: cpu?.util,
          numCpus: cpu?.numCpus ?? this.options.cpuCount,
        }),
        MsgType.TCP_CC_RESPONSE,
      );
    } else if (test.asked.kind === "stream") {
      this.reply(
        encodeClassicStreamResults({
          bytesReceived: counters.bytesReceived,
          recvCalls: u32(counters.recvCalls),
          elapsedTime: elapsed,
          cpuUtil: cpu?.util ?? -1,
          cpuMethod: cpu?.method ?? 0,
          numCpus: cpu?.numCpus ?? this.options.cpuCount,
          recvBufSize: clampI32(counters.recvBufSize),
          sendBufSize: clampI32(counters.sendBufSize),
        }),
        MsgType.TCP_STREAM_RESULTS,
      );
    } else this.reply(
      encodeOmniResults({
        type: RESULTS_TYPE_WORD,
        servErrno: 0,
        bytesReceived: counters.bytesReceived,
        recvCalls: u32(counters.recvCalls),
        recvBufSize: clampI32(counters.recvBufSize),
        bytesSent: counters.bytesSent,
        sendCalls: u32(counters.sendCalls),
        sendBufSize: clampI32(counters.sendBufSize),
        failedSends: 0,
        transReceived: u32(counters.transactions),
        elapsedTime: elapsed,
        cpuUtil: cpu?.util ?? 0,
        cpuPercentUser: cpu?.user ?? 0,
        cpuPercentSystem: cpu?.system ?? 0,
        cpuPercentIowait: cpu?.iowait ?? 0,
        cpuPercentIrq: cpu?.irq ?? 0,
        cpuPercentSwintr: cpu?.softirq ?? 0,
        cpuMethod: cpu?.method ?? 0,
        numCpus: cpu?.numCpus ?? 0,
        peakCpuId: cpu?.peakCpuId ?? 0,
        peakCpuUtil: cpu?.peakCpuUtil ?? 0,
        transportRetrans: setup.protocol === "udp" || setup.connectPerTransaction ? -1 : clampI32(counters.transportRetrans),
        congControl: reportCong ? counters.congestionName.slice(0, 16) : "",
      }),
      RESULTS_TYPE_WORD,
    );
    this.test = undefined;
    this.stateValue = "idle";
    this.idleDeadlineMs = nowMs + this.options.requestTimeoutMs;
    // Requests that arrived during the test are handled now, in order.
    while (this.queue.length > 0 && this.stateValue === "idle") this.handleFrame(this.queue.shift()!, nowMs);
  }

  tick(nowMs: number): void {
    const deadline = this.nextDeadlineMs();
    if (deadline === undefined || nowMs < deadline) return;
    switch (this.stateValue) {
      case "passphrase":
        this.io.act({ kind: "log", message: "no passphrase in time; closing" });
        this.shut();
        return;
      case "idle":
        this.io.act({ kind: "log", message: this.frames.pending > 0 ? "request incomplete in time; closing" : "control connection idle; closing" });
        this.shut();
        return;
      case "running":
        this.test!.timedOut = true;
        this.test!.stopDeadlineMs = nowMs + this.options.stopGraceMs;
        this.stateValue = "stopping";
        this.io.act({ kind: "stop", reason: "timer" });
        return;
      case "stopping":
        this.dataFailed(Errno.ETIMEDOUT, nowMs);
        return;
      default:
        return;
    }
  }

  private handleFrame(frame: Uint8Array, nowMs: number): void {
    const type = messageType(frame);
    if (this.stateValue === "passphrase") {
      // netserver -Z: anything but the right passphrase closes the connection without a reply.
      if (type !== MsgType.PASSPHRASE || decodePassphrase(frame) !== this.options.passphrase) {
        this.io.act({ kind: "log", message: "wrong or missing passphrase; closing" });
        this.shut();
        return;
      }
      this.stateValue = "idle";
      this.idleDeadlineMs = nowMs + this.options.requestTimeoutMs;
      return;
    }
    this.idleDeadlineMs = nowMs + this.options.requestTimeoutMs;
    switch (type) {
      case MsgType.DO_OMNI:
        this.startTest(decodeOmniRequest(frame), { kind: "omni" });
        return;
      case MsgType.DO_TCP_STREAM:
        this.startTest(omniFromClassic(decodeClassicStreamRequest(frame)), { kind: "stream" });
        return;
      case MsgType.DO_TCP_CC: {
        const cc = decodeCcRequest(frame);
        this.startTest(omniFromCc(cc), { kind: "cc", requestSize: cc.requestSize, responseSize: cc.responseSize });
        return;
      }
      case MsgType.PASSPHRASE:
        return;
      case MsgType.CPU_CALIBRATE:
        this.reply(encodeCpuCalibrateReply(this.options.cpuRate, this.options.cpuCount), MsgType.CPU_CALIBRATE);
        return;
      case MsgType.DEBUG_ON:
      case MsgType.DEBUG_OFF:
        this.reply(encodeStatusReply(MsgType.DEBUG_OK, 0), MsgType.DEBUG_OK);
        return;
      case MsgType.DO_SYSINFO:
        this.reply(encodeSysinfoReply(), MsgType.SYSINFO_RESPONSE);
        return;
      default:
        this.io.act({ kind: "log", message: `unknown request type ${type}; answered 998` });
        this.reply(encodeUnknownRequestReply(this.lastReplyType), this.lastReplyType);
        return;
    }
  }

  private startTest(request: OmniRequest, asked: Asked): void {
    const check = checkOmniRequest(request, this.options.limits);
    if (!check.ok) {
      const type = responseType(asked.kind);
      this.io.act({ kind: "log", message: `refused ${REQUEST_NAMES[asked.kind]}: ${check.reason} (errno ${check.errno})` });
      this.reply(encodeStatusReply(type, check.errno), type);
      this.shut();
      return;
    }
    if (request.fillFile !== "") {
      this.io.act({ kind: "log", message: "client named a fill file; ignored (never opened)" });
    }
    // TCP_CC moves no byte: a transaction is a connection the server accepts and closes.
    const setup = asked.kind === "cc" ? { ...check.setup, requestSize: 0, responseSize: 0 } : check.setup;
    this.test = { request, asked, setup, startMs: 0, padS: 0, deadlineMs: undefined, timedOut: false, stopDeadlineMs: undefined };
    this.stateValue = "binding";
    this.io.act({ kind: "bind", setup });
  }

  private fail(message: string): void {
    this.io.act({ kind: "log", message: `${message}; closing` });
    if (this.stateValue === "running" || this.stateValue === "stopping" || this.stateValue === "binding") this.io.act({ kind: "abort" });
    this.shut();
  }

  private reply(bytes: Uint8Array, type: number): void {
    this.lastReplyType = type;
    this.io.write(bytes);
  }

  private shut(): void {
    this.stateValue = "closed";
    this.test = undefined;
    this.queue.length = 0;
    this.io.close();
  }
}

const REQUEST_NAMES: Record<Asked["kind"], string> = { omni: "DO_OMNI", stream: "DO_TCP_STREAM", cc: "DO_TCP_CC" };

function responseType(kind: Asked["kind"]): number {
  return kind === "cc" ? MsgType.TCP_CC_RESPONSE : kind === "stream" ? MsgType.TCP_STREAM_RESPONSE : MsgType.OMNI_RESPONSE;
}

/** The words every classic request shares, as the omni request the server checks and runs. */
type ClassicCommon = Pick<ClassicStreamRequest, "sendBufSize" | "recvBufSize" | "noDelay" | "measureCpu" | "cpuRate" | "testLength" | "soRcvAvoid" | "soSndAvoid" | "port" | "ipFamily">;

function omniFromClassicWords(c: ClassicCommon, test: { direction: number; flags: number; sizes: Partial<OmniRequest> }): OmniRequest {
  const family = c.ipFamily === NetFamily.INET6 ? NetFamily.INET6 : NetFamily.INET;
  const wildcard = family === NetFamily.INET6 ? "::" : "0.0.0.0";
  return OmniRequest.parse({
    ...test.sizes,
    sendBufSize: c.sendBufSize,
    recvBufSize: c.recvBufSize,
    flags: test.flags | (c.noDelay ? OmniFlag.NO_DELAY : 0) | (c.measureCpu ? OmniFlag.MEASURE_CPU : 0),
    cpuRate: c.cpuRate,
    testLength: c.testLength,
    soRcvAvoid: c.soRcvAvoid >>> 0,
    soSndAvoid: c.soSndAvoid >>> 0,
    dataPort: Math.max(0, c.port),
    ipFamily: family,
    direction: test.direction,
    netperfIp: wildcard,
    netserverIp: wildcard,
  });
}

/** A classic TCP stream request is an omni one in which the server receives over TCP; checked and run as such. */
function omniFromClassic(c: ClassicStreamRequest): OmniRequest {
  const sizes = { receiveSize: c.receiveSize > 0 ? c.receiveSize : -1, recvAlignment: c.recvAlignment >>> 0, recvOffset: c.recvOffset >>> 0 };
  return omniFromClassicWords(c, { direction: Direction.RECV, flags: 0, sizes });
}

/** TCP_CC is checked as a TCP connect/request/response test of one byte each way; its data phase then moves none. */
function omniFromCc(c: CcRequest): OmniRequest {
  return omniFromClassicWords(c, { direction: Direction.RECV | Direction.XMIT, flags: OmniFlag.CONNECT_TEST, sizes: { requestSize: 1, responseSize: 1 } });
}

function clampI32(n: number): number {
  return Math.max(-0x8000_0000, Math.min(0x7fff_ffff, Math.round(n)));
}

/** Calls counters are 32-bit on the wire; netperf itself truncates them. */
function u32(n: number): number {
  return Math.max(0, Math.floor(n)) % 0x1_0000_0000;
}
