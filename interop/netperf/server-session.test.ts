import { describe, expect, test } from "bun:test";
import { CAPTURE_PARAMS } from "../../tests/fixtures/netperf/capture-params.ts";
import { captureConversations, CAPTURES, split656, type CaptureName } from "../../tests/fixtures/netperf/load.ts";
import { decodeCcResponse, decodeCcResults, encodeCcRequest } from "./classic-cc.ts";
import { MsgType } from "./constants.ts";
import type { ServerDataCounters } from "./data-setup.ts";
import { encodePassphrase, servErrno } from "./minor-messages.ts";
import { encodeOmniRequest } from "./omni-request.ts";
import { decodeOmniResponse } from "./omni-response.ts";
import { decodeOmniResults } from "./omni-results.ts";
import { DEFAULT_SERVER_OPTIONS, NetserverSession, type ServerAction, type ServerSessionOptions } from "./server-session.ts";
import { buildOmniRequest } from "./test-request.ts";
import { MESSAGE_SIZE, messageType } from "./words.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

class Recorder {
  written: Uint8Array[] = [];
  actions: ServerAction[] = [];
  closed = false;
  io = {
    write: (b: Uint8Array) => void this.written.push(b.slice()),
    close: () => void (this.closed = true),
    act: (a: ServerAction) => void this.actions.push(a),
  };
  kinds(): string[] {
    return this.actions.filter((a) => a.kind !== "log").map((a) => a.kind);
  }
}

const OPTIONS: ServerSessionOptions = {
  ...DEFAULT_SERVER_OPTIONS,
  limits: { ...DEFAULT_SERVER_OPTIONS.limits, cpuMeasurable: true },
  cpuCount: 2,
};

/**
 * Words the stock netserver leaves stale or fills from its own clock; not reproducible
 * (docs/protocols/netperf.md §5.2).
 */
function resultsWordsToCompare(measured: boolean): number[] {
  const offsets: number[] = [];
  for (let off = 0; off < 116; off += 4) {
    if (off === 48) continue; // elapsed_time: compared numerically
    if (off === 76) continue; // serv_dem: never set by netserver
    if (!measured && off >= 52 && off < 96) continue; // CPU block: stale without MEASURE_CPU
    offsets.push(off);
  }
  return offsets;
}

function countersFrom(bytes: Uint8Array, measured: boolean): ServerDataCounters {
  const r = decodeOmniResults(bytes);
  return {
    bytesReceived: r.bytesReceived,
    recvCalls: r.recvCalls,
    bytesSent: r.bytesSent,
    sendCalls: r.sendCalls,
    transactions: r.transReceived,
    recvBufSize: r.recvBufSize,
    sendBufSize: r.sendBufSize,
    transportRetrans: r.transportRetrans,
    congestionName: r.congControl,
    cpu: measured
      ? {
          util: r.cpuUtil,
          user: r.cpuPercentUser,
          system: r.cpuPercentSystem,
          iowait: r.cpuPercentIowait,
          irq: r.cpuPercentIrq,
          softirq: r.cpuPercentSwintr,
          peakCpuId: r.peakCpuId,
          peakCpuUtil: r.peakCpuUtil,
          method: r.cpuMethod,
          numCpus: r.numCpus,
        }
      : undefined,
  };
}

/**
 * Replays the client half of a capture into a session, answering its actions with what the stock server saw, and
 * checks the session writes what the stock server wrote.
 */
function replay(name: CaptureName, cut: number | undefined) {
  const conv = captureConversations(name)[0]!;
  const serverFrames = split656(conv.toClient);
  const rec = new Recorder();
  const session = new NetserverSession(rec.io, { ...OPTIONS, passphrase: CAPTURE_PARAMS[name].passphrase }, 0);
  let now = 0;
  let round = 0;
  const pump = () => {
    for (;;) {
      const a = rec.actions.shift();
      if (!a) return;
      if (a.kind === "bind") {
        const setup = decodeOmniResponse(serverFrames[round * 2]!);
        session.dataBound({ port: setup.dataPort, recvBufSize: setup.recvBufSize, sendBufSize: setup.sendBufSize }, now);
      } else if (a.kind === "start") {
        const captured = serverFrames[round * 2 + 1]!;
        const capturedElapsed = decodeOmniResults(captured).elapsedTime;
        const measured = a.run.setup.measureCpu;
        if (name === "tcp_crr") {
          // The stock server ends CRR only by its padded timer.
          now += 6000;
          session.tick(now);
          expect(rec.actions.map((x) => x.kind)).toContain("stop");
          rec.actions.length = 0;
          now += capturedElapsed * 1000 - 2000;
        } else {
          now += capturedElapsed * 1000;
        }
        session.dataEnded(countersFrom(captured, measured), now);
        round++;
      }
    }
  };
  const stream = conv.toServer;
  const chunks = cut === undefined ? [stream] : [stream.subarray(0, cut), stream.subarray(cut)];
  for (const c of chunks) {
    session.receive(c, now);
    pump();
  }
  return { rec, session, serverFrames, rounds: round };
}

describe("NetserverSession replaying captures", () => {
  for (const name of CAPTURES) {
    test(`${name}: setup replies and results match the stock server's (whole and split at every offset)`, () => {
      const whole = replay(name, undefined);
      const { rec, serverFrames } = whole;
      expect(rec.written.length).toBe(serverFrames.length);
      rec.written.forEach((mine, i) => {
        const stock = serverFrames[i]!;
        if (i % 2 === 0) {
          // Later rounds' stock replies carry stale bytes (flags junk, old strings): compare the fields we define.
          const reply = decodeOmniResponse(mine);
          const stockReply = decodeOmniResponse(stock);
          if (i === 0) expect(hex(mine)).toBe(hex(stock));
          else expect({ ...reply, flags: reply.flags & 0x9 }).toEqual({ ...stockReply, flags: stockReply.flags & 0x9 });
        } else {
          const measured = (decodeOmniResponse(serverFrames[i - 1]!).flags & 0x8) !== 0;
          for (const off of resultsWordsToCompare(measured)) expect(`${off}:${hex(mine.subarray(off, off + 4))}`).toBe(`${off}:${hex(stock.subarray(off, off + 4))}`);
          expect(hex(mine.subarray(116))).toBe(hex(stock.subarray(116)));
          expect(decodeOmniResults(mine).elapsedTime).toBeCloseTo(decodeOmniResults(stock).elapsedTime, 3);
        }
      });
      const reference = rec.written.map(hex);
      const stream = captureConversations(name)[0]!.toServer;
      for (let cut = 1; cut < stream.length; cut++) {
        expect(replay(name, cut).rec.written.map(hex)).toEqual(reference);
      }
    });
  }

  test("TCP_RR setup: what the glue is asked to build", () => {
    const rec = new Recorder();
    const session = new NetserverSession(rec.io, OPTIONS, 0);
    session.receive(split656(captureConversations("tcp_rr_count")[0]!.toServer)[0]!, 0);
    const bind = rec.actions.find((a) => a.kind === "bind");
    expect(bind).toMatchObject({
      kind: "bind",
      setup: {
        protocol: "tcp",
        family: "ipv4",
        bindAddress: "0.0.0.0",
        port: 22241,
        serverReceives: true,
        serverSends: true,
        requestSize: 32,
        responseSize: 1024,
        noDelay: true,
        limitTransactions: 5000,
        limitBytes: 0,
        testLengthS: 0,
        idleTimeoutMs: 30_000,
      },
    });
    session.dataBound({ port: 22241, recvBufSize: 131072, sendBufSize: 16384 }, 5);
    const start = rec.actions.find((a) => a.kind === "start");
    expect(start).toMatchObject({ kind: "start", run: { receiveSize: 32, sendSize: 1024, testLengthS: 0 } });
    // Count mode has no stop timer: only the idle guard.
    expect(session.nextDeadlineMs()).toBeUndefined();
  });
});

describe("NetserverSession timers and errors", () => {
  const request = (over: Parameters<typeof buildOmniRequest>[0]) => encodeOmniRequest(buildOmniRequest(over).request);
  const tcpStream = { test: "TCP_STREAM", testLength: 2, localSendBuf: 16384, localRecvBuf: 131072 } as const;

  test("a receiving test stops at length + 4 s and reports the pad removed", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 1000);
    s.receive(request({ test: "UDP_STREAM", testLength: 2, localSendSize: 1, localSendBuf: 212992, localRecvBuf: 212992 }), 1000);
    s.dataBound({ port: 40000, recvBufSize: 212992, sendBufSize: 212992 }, 1000);
    expect(s.nextDeadlineMs()).toBe(7000);
    s.tick(6999);
    expect(rec.kinds()).toEqual(["bind", "start"]);
    s.tick(7000);
    expect(rec.kinds()).toEqual(["bind", "start", "stop"]);
    s.dataEnded({ bytesReceived: 10, recvCalls: 10, bytesSent: 0, sendCalls: 0, transactions: 0, recvBufSize: 212992, sendBufSize: 212992, transportRetrans: 5, congestionName: "" }, 7010);
    const results = decodeOmniResults(rec.written[1]!);
    expect(results.elapsedTime).toBeCloseTo(2.01, 5);
    expect(results.transportRetrans).toBe(-1);
    expect(results.congControl).toBe("");
    expect(s.state).toBe("idle");
  });

  test("a transmit-only test (TCP_MAERTS) stops at the length with no pad, counted from the data connection's accept", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request({ ...tcpStream, test: "TCP_MAERTS" }), 0);
    s.dataBound({ port: 40000, recvBufSize: 131072, sendBufSize: 16384 }, 0);
    const start = rec.actions.find((a) => a.kind === "start");
    expect(start).toMatchObject({ run: { sendSize: 16384, setup: { serverSends: true, serverReceives: false } } });
    expect(s.nextDeadlineMs()).toBe(2000);
    s.dataAccepted(300);
    expect(s.nextDeadlineMs()).toBe(2300);
    const reply = decodeOmniResponse(rec.written[0]!);
    expect([reply.sendSize, reply.sendWidth]).toEqual([16384, 2]);
  });

  test("the end of the test by the client (EOF) reports the real elapsed time", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request(tcpStream), 0);
    s.dataBound({ port: 40000, recvBufSize: 131072, sendBufSize: 16384 }, 100);
    s.dataEnded({ bytesReceived: 5e9, recvCalls: 1, bytesSent: 0, sendCalls: 0, transactions: 0, recvBufSize: 1, sendBufSize: 1, transportRetrans: 3, congestionName: "cubic" }, 2100);
    const r = decodeOmniResults(rec.written[1]!);
    expect(r.elapsedTime).toBe(2);
    expect(r.bytesReceived).toBe(5e9);
    expect(r.transportRetrans).toBe(3);
    expect(r.congControl).toBe("cubic");
  });

  test("if the data plane never reports after a stop, the client gets an error instead of a hang", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request(tcpStream), 0);
    s.dataBound({ port: 40000, recvBufSize: 131072, sendBufSize: 16384 }, 0);
    s.tick(6000);
    s.tick(6000 + OPTIONS.stopGraceMs);
    expect(servErrno(rec.written.at(-1)!)).toBe(110);
    expect(rec.closed).toBe(true);
  });

  test("bind failure: setup reply with the errno, then close (docs/protocols/netperf.md §9)", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request(tcpStream), 0);
    s.dataFailed(98, 0);
    expect(messageType(rec.written[0]!)).toBe(MsgType.OMNI_RESPONSE);
    expect(servErrno(rec.written[0]!)).toBe(98);
    expect(rec.closed).toBe(true);
  });

  test("unknown type: 998 and the connection stays open; CPU_CALIBRATE answered", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    const weird = new Uint8Array(MESSAGE_SIZE);
    new DataView(weird.buffer).setUint32(0, 1234);
    s.receive(weird, 0);
    expect(hex(rec.written[0]!.subarray(0, 8))).toBe("00000000000003e6");
    expect(rec.closed).toBe(false);
    const cal = new Uint8Array(MESSAGE_SIZE);
    new DataView(cal.buffer).setUint32(0, 5);
    s.receive(cal, 0);
    expect(hex(rec.written[1]!.subarray(0, 16))).toBe("000000050000000042c8000000000002");
  });

  test("hostile requests get an errno reply, never a bind", () => {
    const cases: [Parameters<typeof buildOmniRequest>[0] | Uint8Array, number][] = [
      [{ test: "TCP_RR", testLength: 1, requestSize: 1 << 30, localSendBuf: 1, localRecvBuf: 1 }, 22],
      [{ ...tcpStream, remoteRecvBuf: 2 ** 31 - 1 }, 22],
      [{ ...tcpStream, family: "ipv6" }, -1],
    ];
    for (const [input, errno] of cases) {
      const rec = new Recorder();
      const opts = { ...OPTIONS, limits: { ...OPTIONS.limits, families: "ipv4" as const } };
      const s = new NetserverSession(rec.io, opts, 0);
      s.receive(input instanceof Uint8Array ? input : request(input), 0);
      expect(rec.kinds()).not.toContain("bind");
      expect(servErrno(rec.written[0]!)).toBe(errno === -1 ? 97 : errno);
    }
    // Bad family code, bad socket type, zero direction, CRR over UDP.
    const raw = (patch: (dv: DataView) => void) => {
      const b = request(tcpStream);
      patch(new DataView(b.buffer));
      return b;
    };
    for (const [bytes, errno] of [
      [raw((dv) => dv.setUint32(92, 9)), 97],
      [raw((dv) => dv.setUint32(96, 7)), 93],
      [raw((dv) => dv.setUint32(104, 0)), 22],
      [raw((dv) => (dv.setUint32(96, 2), dv.setUint32(100, 17), dv.setUint32(104, 6), dv.setUint32(56, 4), dv.setInt32(28, 1), dv.setInt32(52, 1))), 22],
      [raw((dv) => dv.setUint32(88, 70000)), 22],
    ] as const) {
      const rec = new Recorder();
      const s = new NetserverSession(rec.io, OPTIONS, 0);
      s.receive(bytes, 0);
      expect(rec.kinds()).not.toContain("bind");
      expect(servErrno(rec.written[0]!)).toBe(errno);
    }
  });

  test("a cpu_rate of +Inf or NaN with MEASURE_CPU gets our own rate back, not an exception", () => {
    for (const rate of [Number.POSITIVE_INFINITY, Number.NaN, -5]) {
      const b = request({ ...tcpStream, measureRemoteCpu: true });
      new DataView(b.buffer).setFloat32(60, rate, false);
      const rec = new Recorder();
      const s = new NetserverSession(rec.io, OPTIONS, 0);
      s.receive(b, 0);
      expect(rec.kinds()).toEqual(["bind"]);
      s.dataBound({ port: 40000, recvBufSize: 131072, sendBufSize: 16384 }, 0);
      expect(decodeOmniResponse(rec.written[0]!).cpuRate).toBe(OPTIONS.cpuRate);
    }
  });

  test("alignment 0 (which crashes the stock netserver) is served", () => {
    const b = request(tcpStream);
    new DataView(b.buffer).setUint32(16, 0);
    new DataView(b.buffer).setUint32(40, 0);
    const rec = new Recorder();
    new NetserverSession(rec.io, OPTIONS, 0).receive(b, 0);
    expect(rec.kinds()).toEqual(["bind"]);
  });

  test("the fill file is never part of what the glue is asked to do", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request({ ...tcpStream, remoteFillFile: "/etc/shadow" }), 0);
    expect(JSON.stringify(rec.actions.filter((a) => a.kind !== "log"))).not.toContain("shadow");
  });

  test("idle or half-sent requests time out; wrong passphrase closes without a reply", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(new Uint8Array(100), 10);
    s.tick(10 + OPTIONS.requestTimeoutMs);
    expect(rec.closed).toBe(true);
    expect(rec.written.length).toBe(0);

    const rec2 = new Recorder();
    const s2 = new NetserverSession(rec2.io, { ...OPTIONS, passphrase: "secret" }, 0);
    s2.receive(encodePassphrase("wrong"), 0);
    expect(rec2.closed).toBe(true);
    expect(rec2.written.length).toBe(0);

    const rec3 = new Recorder();
    const s3 = new NetserverSession(rec3.io, { ...OPTIONS, passphrase: "secret" }, 0);
    s3.tick(OPTIONS.passphraseTimeoutMs);
    expect(rec3.closed).toBe(true);
  });

  test("control EOF during a test aborts the data phase", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request(tcpStream), 0);
    s.dataBound({ port: 1, recvBufSize: 1, sendBufSize: 1 }, 0);
    s.controlClosed(10);
    expect(rec.kinds()).toEqual(["bind", "start", "abort"]);
    expect(rec.closed).toBe(true);
  });

  test("requests sent ahead during a test are bounded", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(request(tcpStream), 0);
    for (let i = 0; i < OPTIONS.maxQueuedFrames; i++) s.receive(request(tcpStream), 0);
    expect(rec.closed).toBe(false);
    s.receive(request(tcpStream), 0);
    expect(rec.closed).toBe(true);
  });

  test("random garbage never throws and never binds more than the frames allow", () => {
    for (let seed = 1; seed < 200; seed++) {
      const rec = new Recorder();
      const s = new NetserverSession(rec.io, OPTIONS, 0);
      let x = seed;
      const bytes = new Uint8Array(656 * 3 + (seed % 656));
      for (let i = 0; i < bytes.length; i++) bytes[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
      if (seed % 2 === 0) new DataView(bytes.buffer).setUint32(0, 97);
      s.receive(bytes, 0);
      s.dataBound({ port: 1, recvBufSize: 1, sendBufSize: 1 }, 0);
      expect(rec.kinds().filter((k) => k === "bind").length).toBeLessThanOrEqual(1);
    }
  });
});

describe("DO_TCP_CC (netperf TCP_CC)", () => {
  test("bound as a connect-and-close server, answered with TCP_CC_RESPONSE, results under the response's type", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(encodeCcRequest({ requestSize: 1, responseSize: 1, testLength: 2, ipFamily: 4 }), 0);
    const bind = rec.actions.find((a) => a.kind === "bind");
    expect(bind && bind.kind === "bind" && bind.setup).toMatchObject({ protocol: "tcp", connectPerTransaction: true, requestSize: 0, responseSize: 0, serverReceives: true, serverSends: true, testLengthS: 2 });
    s.dataBound({ port: 40000, recvBufSize: 131072, sendBufSize: 16384 }, 10);
    expect(messageType(rec.written[0]!)).toBe(MsgType.TCP_CC_RESPONSE);
    expect(decodeCcResponse(rec.written[0]!)).toMatchObject({ servErrno: 0, dataPort: 40000, recvBufSize: 131072, sendBufSize: 16384 });
    // The padded timer (2 s + 4 s) stops the phase, as netserver's; the pad comes off the elapsed time.
    s.tick(6_010);
    expect(rec.kinds()).toEqual(["bind", "start", "stop"]);
    s.dataEnded({ bytesReceived: 0, recvCalls: 0, bytesSent: 0, sendCalls: 0, transactions: 1234, recvBufSize: 131072, sendBufSize: 16384, transportRetrans: -1, congestionName: "" }, 6_020);
    const results = rec.written[1]!;
    expect(new DataView(results.buffer).getUint32(0, true)).toBe(MsgType.TCP_CC_RESPONSE);
    const r = decodeCcResults(results);
    expect(r.transReceived).toBe(1234);
    expect(r.bytesReceived).toBe(2468);
    expect(r.elapsedTime).toBeCloseTo(2.01, 3);
    expect(s.state).toBe("idle");
  });

  test("a request the checks refuse is answered with its errno under TCP_CC_RESPONSE", () => {
    const rec = new Recorder();
    const s = new NetserverSession(rec.io, OPTIONS, 0);
    s.receive(encodeCcRequest({ testLength: 1, ipFamily: 4, recvBufSize: 0x7fff_ffff }), 0);
    expect(messageType(rec.written[0]!)).toBe(MsgType.TCP_CC_RESPONSE);
    expect(servErrno(rec.written[0]!)).toBe(22);
    expect(rec.closed).toBe(true);
  });
});
