import { describe, expect, test } from "bun:test";
import { clientsOf, LINUX_SYNC_CAPTURES, ntttcpCommands, optionValue, parseCapture, streamOf } from "../../tests/fixtures/ntttcp/capture.ts";
import { encodeSyncInt, SyncCommand, SyncFramer, TestState } from "./linux-sync-codec.ts";
import { LinuxSyncSender, type LinuxSyncSenderEvent } from "./linux-sync-sender.ts";
import { RecordingTransport } from "./transport.ts";
import { concatBytes } from "../../lib/bytes.ts";

function senderFor(argv: string[], t: RecordingTransport, events: LinuxSyncSenderEvent[]) {
  const w = optionValue(argv, "-W", 0);
  const d = optionValue(argv, "-t", 60);
  const c = optionValue(argv, "-C", 0);
  const s: LinuxSyncSender = new LinuxSyncSender({ cycle: w + d + c, duration: d, last: argv.includes("-L") }, t, (e) => {
    events.push(e);
    if (e.type === "connect-data") s.dataReady();
  });
  return s;
}

describe("sender writes what the real sender wrote, given the real receiver's answers", () => {
  for (const name of LINUX_SYNC_CAPTURES) {
    const cap = parseCapture(name);
    const senders = ntttcpCommands(cap).slice(1);
    clientsOf(cap).forEach((client, i) => {
      const argv = senders[i]!;
      const serverBytes = streamOf(cap, client, "server");
      const clientValues = new SyncFramer().push(streamOf(cap, client, "client"));
      // The real sender sends 'E' when its measured time is shorter than the cycle: any W/C, or SIGINT.
      const cutShort = optionValue(argv, "-W", 0) + optionValue(argv, "-C", 0) > 0 || cap.command.includes("kill -INT");
      for (let cut = 0; cut <= serverBytes.length; cut++) {
        test(`${name} sender ${i + 1}, answers split at ${cut}`, () => {
          const t = new RecordingTransport();
          const events: LinuxSyncSenderEvent[] = [];
          const s = senderFor(argv, t, events);
          s.start();
          // Answers up to the start reply(s); the 'E' answer, if any, is the last 4 bytes and comes after end().
          const endReply = clientValues.includes(SyncCommand.exit) ? 4 : 0;
          const beforeEnd = serverBytes.subarray(0, serverBytes.length - endReply);
          const k = Math.min(cut, beforeEnd.length);
          s.onData(beforeEnd.subarray(0, k));
          s.onData(beforeEnd.subarray(k));
          expect(s.phase).toBe("running");
          s.end(cutShort);
          if (endReply) s.onData(serverBytes.subarray(serverBytes.length - endReply));
          expect(new SyncFramer().push(concatBytes(t.writes))).toEqual(clientValues);
          expect(s.phase).toBe("done");
          expect(t.closed).toBe(true);
          expect(events.filter((e) => e.type === "start")).toHaveLength(1);
        });
      }
    });
  }

  test("-W/-C: cycle proposal is W+t+C, and the receiver's confirmation of 'E' is reported", () => {
    const cap = parseCapture("ntttcp-linux-sync-warmup-E.txt");
    const [client] = clientsOf(cap);
    const t = new RecordingTransport();
    const events: LinuxSyncSenderEvent[] = [];
    const s = senderFor(ntttcpCommands(cap)[1]!, t, events);
    s.start();
    s.onData(streamOf(cap, client!, "server").subarray(0, 12));
    expect(s.cycle).toBe(4);
    s.end(true);
    s.onData(encodeSyncInt(TestState.finished));
    const logs = events.flatMap((e) => (e.type === "log" ? [e.text] : []));
    expect(logs).toContain("Test cycle time negotiated is: 4 seconds");
    expect(logs).toContain("receiver exited from current test");
    expect(events.at(-1)).toEqual({ type: "ended", receiverExited: true });
  });
});

describe("sender failures", () => {
  function started() {
    const t = new RecordingTransport();
    const events: LinuxSyncSenderEvent[] = [];
    const s = new LinuxSyncSender({ cycle: 5, duration: 5, last: false }, t, (e) => events.push(e));
    s.start();
    return { t, events, s };
  }

  test("a busy receiver (12) aborts before proposing", () => {
    const { t, events, s } = started();
    s.onData(encodeSyncInt(TestState.running));
    expect(s.phase).toBe("failed");
    expect(events.at(-1)).toMatchObject({ type: "failed", reason: "busy" });
    expect(t.writes).toHaveLength(1);
    expect(t.closed).toBe(true);
  });

  test("a reply other than 'R' to the start request aborts", () => {
    const { events, s } = started();
    s.onData(encodeSyncInt(11));
    s.onData(encodeSyncInt(5));
    s.dataReady();
    s.onData(encodeSyncInt(11));
    expect(events.at(-1)).toMatchObject({ type: "failed", reason: "not-ready" });
  });

  test("'W' then 'R' starts after waiting for the last client", () => {
    const { events, s } = started();
    s.onData(concatBytes([encodeSyncInt(11), encodeSyncInt(5)]));
    s.dataReady();
    s.onData(encodeSyncInt(SyncCommand.wait));
    expect(s.phase).toBe("waiting-last");
    s.onData(encodeSyncInt(SyncCommand.run));
    expect(s.phase).toBe("running");
    expect(events.some((e) => e.type === "log" && e.text === "waiting for the last client to join the test")).toBe(true);
  });

  test("the receiver closing during the handshake fails the sender", () => {
    const { events, s } = started();
    s.onClose();
    expect(events.at(-1)).toMatchObject({ type: "failed", reason: "closed" });
  });

  test("no answer to 'E' is harmless", () => {
    const { events, s } = started();
    s.onData(concatBytes([encodeSyncInt(11), encodeSyncInt(5)]));
    s.dataReady();
    s.onData(encodeSyncInt(SyncCommand.run));
    s.end(true);
    s.endTimedOut();
    expect(events.at(-1)).toEqual({ type: "ended", receiverExited: false });
    expect(s.phase).toBe("done");
  });

  test("a colliding cycle (82) is proposed as 83", () => {
    const t = new RecordingTransport();
    const s = new LinuxSyncSender({ cycle: 82, duration: 80, last: false }, t, () => {});
    s.start();
    s.onData(encodeSyncInt(11));
    expect(new SyncFramer().push(concatBytes(t.writes))).toEqual([0x58, 83]);
  });
});
