import { expect, test } from "bun:test";
import { testShape, type MigratedTest } from "../../interop/netperf/test-request.ts";
import { peerName, phaseSide, phaseTest } from "./test-runs.ts";

test("each netperf test is the status kind and side its data moves as, from either end", () => {
  const seen = (["TCP_STREAM", "TCP_MAERTS", "UDP_STREAM", "TCP_RR", "TCP_CRR", "UDP_RR"] as MigratedTest[]).map((t) => {
    const s = testShape(t);
    const client = { protocol: s.protocol, sends: s.clientSends, receives: s.clientReceives, connectPerTransaction: s.connectPerTransaction };
    const server = { ...client, sends: s.clientReceives, receives: s.clientSends };
    return [t, phaseTest(client), phaseSide(client, "client"), phaseSide(server, "server")];
  });
  expect(seen).toEqual([
    ["TCP_STREAM", "stream", "send", "recv"],
    ["TCP_MAERTS", "stream", "recv", "send"],
    ["UDP_STREAM", "stream", "send", "recv"],
    ["TCP_RR", "rr", "client", "server"],
    ["TCP_CRR", "crr", "client", "server"],
    ["UDP_RR", "rr", "client", "server"],
  ]);
});

test("peers read host:port, v6 in brackets, a v4-mapped address as plain v4", () => {
  expect(peerName("127.0.0.1", 5)).toBe("127.0.0.1:5");
  expect(peerName("::ffff:127.0.0.1", 5)).toBe("127.0.0.1:5");
  expect(peerName("::1", 5)).toBe("[::1]:5");
  expect(peerName("::ffff:1", 5)).toBe("[::ffff:1]:5");
});
