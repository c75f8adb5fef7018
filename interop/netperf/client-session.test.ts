import { describe, expect, test } from "bun:test";
import { CAPTURE_PARAMS } from "../../tests/fixtures/netperf/capture-params.ts";
import { captureConversations, CAPTURES, split656, type CaptureName } from "../../tests/fixtures/netperf/load.ts";
import { NetperfClientSession, type ClientAction, type ClientDataCounters, type ClientSessionOptions } from "./client-session.ts";
import { encodeStatusReply } from "./minor-messages.ts";
import { OmniRequest } from "./omni-request.ts";
import { buildOmniRequest } from "./test-request.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

class Recorder {
  written: Uint8Array[] = [];
  actions: ClientAction[] = [];
  closed = false;
  io = {
    write: (b: Uint8Array) => void this.written.push(b.slice()),
    close: () => void (this.closed = true),
    act: (a: ClientAction) => void this.actions.push(a),
  };
}

const LOCAL: ClientDataCounters = { elapsedS: 2, bytesSent: 10, bytesReceived: 10, sendCalls: 10, recvCalls: 10, failedSends: 0, transactions: 10 };

function options(name: CaptureName): ClientSessionOptions {
  const { params, rounds, passphrase } = CAPTURE_PARAMS[name];
  return { request: OmniRequest.parse(buildOmniRequest(params).request), rounds, passphrase, responseTimeoutMs: 120_000, closeTimeoutMs: 60_000 };
}

/** Plays the stock server's side of a capture against a client session, split at `cut`. */
function replay(name: CaptureName, cut: number | undefined) {
  const conv = captureConversations(name)[0]!;
  const rec = new Recorder();
  const s = new NetperfClientSession(rec.io, options(name));
  s.start(0);
  const replies = conv.toClient;
  const chunks = cut === undefined ? [replies] : [replies.subarray(0, cut), replies.subarray(cut)];
  let now = 0;
  for (const c of chunks) {
    s.receive(c, now);
    // The glue runs the data phase after each start-data, then reports; that may start the next round.
    for (let i = rec.actions.findIndex((a) => a.kind === "start-data"); i >= 0; i = rec.actions.findIndex((a) => a.kind === "start-data")) {
      rec.actions.splice(i, 1);
      now += 1000;
      s.dataDone(LOCAL, now);
    }
  }
  return { rec, s, conv };
}

describe("NetperfClientSession replaying captures", () => {
  for (const name of CAPTURES) {
    test(`${name}: writes the stock client's bytes and finishes (whole and split at every offset)`, () => {
      const { rec, s, conv } = replay(name, undefined);
      expect(rec.written.map(hex).join("")).toBe(hex(conv.toServer));
      expect(s.state).toBe("draining");
      expect(rec.actions.map((a) => a.kind)).toEqual(["shutdown-write"]);
      s.controlClosed(99_000);
      const done = rec.actions.at(-1);
      expect(done?.kind).toBe("finished");
      if (done?.kind !== "finished") return;
      expect(done.rounds.length).toBe(CAPTURE_PARAMS[name].rounds);
      expect(done.rounds[0]!.response.dataPort).toBe(CAPTURE_PARAMS[name].params.remoteDataPort!);
      expect(rec.closed).toBe(true);
      for (let cut = 1; cut < conv.toClient.length; cut++) {
        const again = replay(name, cut);
        expect(again.rec.written.map(hex).join("")).toBe(hex(conv.toServer));
        expect(again.s.state).toBe("draining");
      }
    });
  }
});

describe("NetperfClientSession edge cases", () => {
  const opts = options("tcp_rr_r1");
  const [setupReply, resultsReply] = split656(captureConversations("tcp_rr_r1")[0]!.toClient);

  test("results arriving before the local data phase ends are kept", () => {
    const rec = new Recorder();
    const s = new NetperfClientSession(rec.io, opts);
    s.start(0);
    s.receive(setupReply!, 1);
    s.receive(resultsReply!, 2);
    expect(s.state).toBe("data");
    s.dataDone(LOCAL, 3);
    expect(s.state).toBe("draining");
  });

  test("remote errno at setup fails with the errno (netperf: remote error N)", () => {
    const rec = new Recorder();
    const s = new NetperfClientSession(rec.io, opts);
    s.start(0);
    s.receive(encodeStatusReply(98, 98), 1);
    expect(rec.actions.at(-1)).toEqual({ kind: "failed", failure: { kind: "remote-errno", errno: 98, stage: "setup" } });
    expect(rec.closed).toBe(true);
  });

  test("remote errno in place of results aborts the data phase", () => {
    const rec = new Recorder();
    const s = new NetperfClientSession(rec.io, opts);
    s.start(0);
    s.receive(setupReply!, 1);
    s.receive(encodeStatusReply(0x62000000, 104), 2);
    expect(rec.actions.map((a) => a.kind)).toEqual(["start-data", "abort-data", "failed"]);
  });

  test("no reply within the timeout, a half reply then EOF", () => {
    const rec = new Recorder();
    const s = new NetperfClientSession(rec.io, opts);
    s.start(0);
    s.tick(119_999);
    expect(s.state).toBe("await-response");
    s.tick(120_000);
    expect(rec.actions.at(-1)).toEqual({ kind: "failed", failure: { kind: "timeout", waitingFor: "response" } });

    const rec2 = new Recorder();
    const s2 = new NetperfClientSession(rec2.io, opts);
    s2.start(0);
    s2.receive(setupReply!.subarray(0, 100), 1);
    s2.controlClosed(2);
    expect(rec2.actions.at(-1)).toEqual({ kind: "failed", failure: { kind: "closed", partialBytes: 100, waitingFor: "response" } });
  });

  test("-i: `another` sees every finished round and can stop before the most rounds", () => {
    const rec = new Recorder();
    const seen: number[] = [];
    const s = new NetperfClientSession(rec.io, { ...opts, rounds: 5, another: (done) => (seen.push(done.length), done.length < 2) });
    s.start(0);
    for (let round = 0; round < 2; round++) {
      s.receive(setupReply!, round * 10);
      s.dataDone(LOCAL, round * 10 + 5);
      s.receive(resultsReply!, round * 10 + 6);
    }
    expect(seen).toEqual([1, 2]);
    expect(rec.written.length).toBe(2);
    expect(s.state).toBe("draining");
    expect(rec.actions.map((a) => a.kind)).toEqual(["start-data", "start-data", "shutdown-write"]);
  });

  test("a session that gave up on a chatty server ends once and ignores what still comes", () => {
    const rec = new Recorder();
    const s = new NetperfClientSession(rec.io, opts);
    s.start(0);
    const many = new Uint8Array(setupReply!.length * 8);
    for (let i = 0; i < 8; i++) many.set(setupReply!, i * setupReply!.length);
    s.receive(many, 1);
    s.receive(setupReply!, 2);
    s.tick(500_000);
    const ends = rec.actions.filter((a) => a.kind === "failed" || a.kind === "finished");
    expect(ends).toEqual([{ kind: "failed", failure: { kind: "protocol", detail: "server sent messages nobody asked for" } }]);
  });

  test("waits the full reply timeout for results after the local end (UDP end markers lost, TCP_CRR)", () => {
    const rec = new Recorder();
    const s = new NetperfClientSession(rec.io, opts);
    s.start(0);
    s.receive(setupReply!, 0);
    s.dataDone(LOCAL, 2000);
    s.tick(6000);
    expect(s.state).toBe("await-results");
    s.receive(resultsReply!, 6000);
    expect(s.state).toBe("draining");
    s.tick(6000 + 60_000);
    expect(rec.actions.at(-1)?.kind).toBe("finished");
  });
});
