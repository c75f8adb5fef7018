import { describe, expect, test } from "bun:test";
import { type Capture, clientsOf, LINUX_SYNC_CAPTURES, ntttcpCommands, optionValue, parseCapture, readFixture, streamOf } from "../../tests/fixtures/ntttcp/capture.ts";
import { encodeSyncInt, SyncCommand, SyncFramer, TestState } from "./linux-sync-codec.ts";
import { LinuxSyncReceiver, type LinuxSyncReceiverConnection, type LinuxSyncReceiverEvent } from "./linux-sync-receiver.ts";
import { RecordingTransport } from "./transport.ts";
import { concatBytes } from "../../lib/bytes.ts";

/**
 * Replays the senders' side of a capture into our receiver, in capture time order, and returns what we answered on
 * each connection. `cut` splits every captured segment at that offset (clamped), to exercise reassembly.
 */
function replay(cap: Capture, cut: number) {
  const [recvArgs] = ntttcpCommands(cap);
  const events: LinuxSyncReceiverEvent[] = [];
  const rx = new LinuxSyncReceiver({ duration: optionValue(recvArgs!, "-t", 60), multiClient: recvArgs!.includes("-M") }, (e) => events.push(e));
  const conns = new Map<number, { t: RecordingTransport; c: LinuxSyncReceiverConnection }>();
  let cycleEnd = Infinity;
  for (const e of cap.events) {
    if (e.time >= cycleEnd && rx.state === TestState.running) rx.finish();
    if (e.from !== "client") continue;
    let conn = conns.get(e.client);
    if (!conn) {
      const t = new RecordingTransport();
      conn = { t, c: rx.attach(t) };
      conns.set(e.client, conn);
    }
    if (e.kind === "data") {
      const k = Math.min(cut, e.payload.length);
      const before = events.length;
      conn.c.onData(e.payload.subarray(0, k));
      conn.c.onData(e.payload.subarray(k));
      if (events.slice(before).some((x) => x.type === "start")) cycleEnd = e.time + (rx.negotiatedCycle ?? Infinity);
    } else conn.c.onClose();
  }
  return { rx, events, conns };
}

describe("receiver answers the real sender exactly as ntttcp-for-linux did", () => {
  for (const name of LINUX_SYNC_CAPTURES) {
    const cap = parseCapture(name);
    for (const cut of [0, 1, 2, 3, 4]) {
      test(`${name}, segments cut at ${cut}`, () => {
        const { conns } = replay(cap, cut);
        for (const client of clientsOf(cap)) {
          const expected = streamOf(cap, client, "server");
          const got = concatBytes(conns.get(client)!.t.writes);
          expect(new SyncFramer().push(got)).toEqual(new SyncFramer().push(expected));
        }
      });
    }
  }

  test("an interrupted sender's 'E' stops the running test; a late 'E' after the cycle does not", () => {
    const intr = replay(parseCapture("ntttcp-linux-sync-interrupt.txt"), 4).events.map((e) => e.type);
    expect(intr).toContain("interrupted");
    const late = replay(parseCapture("ntttcp-linux-sync-warmup-E.txt"), 4).events.map((e) => e.type);
    expect(late).not.toContain("interrupted");
    expect(late.filter((t) => t === "start")).toHaveLength(1);
  });

  test("multi-client: only the -L sender starts the test, and the cycle is the receiver's -t", () => {
    const { events, rx } = replay(parseCapture("ntttcp-linux-sync-multiclient.txt"), 4);
    expect(events.filter((e) => e.type === "start")).toHaveLength(1);
    expect(rx.negotiatedCycle).toBe(3);
  });
});

/** Probe P1/P3 of ntttcp-linux-sync-probes.txt: "label: sent v (0x...) -> got r raw=..." lines. */
function probeSection(title: string): { sent: number; got: number }[] {
  const text = readFixture("ntttcp-linux-sync-probes.txt");
  const start = text.indexOf(title);
  const body = text.slice(start, text.indexOf("---", start));
  return [...body.matchAll(/sent (-?\d+) \(0x[0-9a-f]+\) -> got (-?\d+)/g)].map((m) => ({ sent: Number(m[1]), got: Number(m[2]) }));
}

describe("hand-made probes against the real receiver", () => {
  test("P1: proposals, 0, and the colliding values 69/76/88 and 'L' without -M", () => {
    const pairs = probeSection("=== P1");
    expect(pairs.length).toBe(9);
    const logs: string[] = [];
    const rx = new LinuxSyncReceiver({ duration: 3, multiClient: false }, (e) => e.type === "log" && logs.push(`${e.level}: ${e.text}`));
    const t = new RecordingTransport();
    const c = rx.attach(t);
    for (const { sent, got } of pairs) {
      const before = t.writes.length;
      c.onData(encodeSyncInt(sent));
      expect(new SyncFramer().push(concatBytes(t.writes.slice(before)))).toEqual([got]);
    }
    expect(logs).toContain("INFO: Test cycle time negotiated is: 5 seconds");
    expect(logs).toContain("INFO: test is negotiated to run with continuous mode");
    expect(logs.filter((l) => l.startsWith("ERR"))).toHaveLength(6);
  });

  test("P3: a proposal of 82 is taken as 'R' and starts the test", () => {
    const pairs = probeSection("=== P3");
    const events: string[] = [];
    const rx = new LinuxSyncReceiver({ duration: 2, multiClient: false }, (e) => events.push(e.type));
    const t = new RecordingTransport();
    const c = rx.attach(t);
    for (const { sent } of pairs) c.onData(encodeSyncInt(sent));
    expect(new SyncFramer().push(concatBytes(t.writes))).toEqual(pairs.map((p) => p.got));
    expect(events).toContain("start");
  });

  test("P2: a second sender sees 12 while running and its 'E' ends the test with 13", () => {
    const rx = new LinuxSyncReceiver({ duration: 2, multiClient: false }, () => {});
    const a = new RecordingTransport();
    const b = new RecordingTransport();
    const ca = rx.attach(a);
    const cb = rx.attach(b);
    ca.onData(encodeSyncInt(SyncCommand.query));
    ca.onData(encodeSyncInt(SyncCommand.run));
    cb.onData(encodeSyncInt(SyncCommand.query));
    cb.onData(encodeSyncInt(SyncCommand.exit));
    expect(new SyncFramer().push(concatBytes(a.writes))).toEqual([11, 0x52]);
    expect(new SyncFramer().push(concatBytes(b.writes))).toEqual([12, 13]);
    expect(rx.state).toBe(TestState.finished);
  });

  test("-M: the eighth waiting sender is rejected with 'E'", () => {
    const rx = new LinuxSyncReceiver({ duration: 2, multiClient: true }, () => {});
    const replies: number[] = [];
    for (let i = 0; i < 8; i++) {
      const t = new RecordingTransport();
      rx.attach(t).onData(encodeSyncInt(SyncCommand.run));
      replies.push(...new SyncFramer().push(concatBytes(t.writes)));
    }
    expect(replies).toEqual([...Array(7).fill(SyncCommand.wait), SyncCommand.exit]);
  });

  test("-M: a sender repeating 'R' holds one seat, and once it closed the last client's 'L' does not write to it", () => {
    const rx = new LinuxSyncReceiver({ duration: 2, multiClient: true }, () => {});
    const repeater = new RecordingTransport();
    const cr = rx.attach(repeater);
    cr.onData(encodeSyncInt(SyncCommand.run));
    cr.onData(encodeSyncInt(SyncCommand.run));
    const runOnce = () => {
      const t = new RecordingTransport();
      rx.attach(t).onData(encodeSyncInt(SyncCommand.run));
      return new SyncFramer().push(concatBytes(t.writes));
    };
    // Seven seats: the repeater's one plus six others; the next is turned away.
    for (let i = 0; i < 6; i++) expect(runOnce()).toEqual([SyncCommand.wait]);
    expect(runOnce()).toEqual([SyncCommand.exit]);
    cr.onClose();
    expect(runOnce()).toEqual([SyncCommand.wait]);
    const last = new RecordingTransport();
    // RecordingTransport throws on a write after close: the repeater must be skipped.
    rx.attach(last).onData(encodeSyncInt(SyncCommand.last));
    expect(new SyncFramer().push(concatBytes(repeater.writes))).toEqual([SyncCommand.wait, SyncCommand.wait]);
    expect(new SyncFramer().push(concatBytes(last.writes))).toEqual([SyncCommand.run, SyncCommand.run]);
  });

  test("a sender that leaves while waiting is not released later", () => {
    const rx = new LinuxSyncReceiver({ duration: 2, multiClient: true }, () => {});
    const gone = new RecordingTransport();
    const cg = rx.attach(gone);
    cg.onData(encodeSyncInt(SyncCommand.run));
    cg.onClose();
    const stays = new RecordingTransport();
    rx.attach(stays).onData(encodeSyncInt(SyncCommand.run));
    const last = new RecordingTransport();
    rx.attach(last).onData(encodeSyncInt(SyncCommand.last));
    // RecordingTransport throws on a write after close, so reaching here means the closed one was skipped.
    expect(new SyncFramer().push(concatBytes(gone.writes))).toEqual([0x57]);
    expect(new SyncFramer().push(concatBytes(stays.writes))).toEqual([0x57, 0x52]);
    expect(new SyncFramer().push(concatBytes(last.writes))).toEqual([0x52, 0x52]);
  });
});
