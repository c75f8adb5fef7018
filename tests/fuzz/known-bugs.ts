/**
 * Bugs the fuzz targets found in modules this suite does not own, reported to their owners. Each predicate
 * recognises exactly that bug's symptom, so a target can go on fuzzing past it; known-bugs.test.ts holds the
 * minimal failing input of each as `test.failing`. When a fix lands, that test starts failing: delete it and the
 * predicate together.
 */
import { z } from "zod";
import { Iperf2WireError } from "../../interop/iperf2/wire-error.ts";

/** Largest value a 64-bit wire count or iperf 2's 56-bit rate (32 + 24 bits) can carry. */
const TWO_64 = 2 ** 64;
const TWO_56 = 2 ** 56;

type Issue = { path: PropertyKey[]; code: string; input?: unknown };

function onlyTooBig(issues: readonly Issue[], paths: readonly string[], max: number, value: (path: string) => unknown): boolean {
  return (
    issues.length > 0 &&
    issues.every((i) => {
      const p = i.path.map(String).join(".");
      const v = value(p);
      return paths.includes(p) && i.code === "too_big" && typeof v === "number" && Number.isInteger(v) && v <= max;
    })
  );
}

function at(root: unknown, path: string): unknown {
  let v: unknown = root;
  for (const k of path.split(".")) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

export const KNOWN = {
  /**
   * netperf: a DO_OMNI with MEASURE_CPU and a cpu_rate float of +Infinity (0x7f800000 at offset 60) passes
   * checkOmniRequest; NetserverSession.dataBound then copies it into the OMNI_RESPONSE, whose zod schema rejects
   * Infinity, and a ZodError escapes dataBound (compat/netperf/server.ts calls it from an async bind(): rejected
   * promise, no reply, the client waits 120 s).
   */
  netperfInfiniteCpuRate(e: Error): boolean {
    return e instanceof z.ZodError && e.issues.some((i) => i.path.join(".") === "cpuRate");
  },

  /**
   * netperf: NetperfClientSession.receive has no guard for the "done" state. Once the session has ended (any
   * failure, e.g. a timeout, or the "nobody asked for" check itself), frames that keep arriving pile up until that
   * check fires: another "failed" action and another io.close(), again for every further frame.
   */
  netperfClientFailsTwice(ends: ReadonlyArray<{ kind: string; failure?: { kind: string; detail?: string } }>): boolean {
    return ends.slice(1).every((a) => a.kind === "failed" && a.failure?.kind === "protocol" && a.failure.detail === "server sent messages nobody asked for");
  },

  /**
   * iperf 2: decodeClientHeader reads the rate as 32 low bits plus 24 high bits (up to 2^56) while ClientHeaderExt
   * allows at most MAX_RATE = 2^53 - 1, so a decoded header can fail its own schema and encodeClientHeader rejects
   * it (bad-value); rates past 2^53 are also not exact.
   */
  iperf2RateBeyondSchema(issues: readonly Issue[], header: unknown): boolean {
    return onlyTooBig(issues, ["ext.rate"], TWO_56, (p) => at(header, p));
  },

  /**
   * iperf 2: describeClientHeader turns amount words -2^31 .. -2147483601 (0x80000000 ..) into up to 21474836.48 s,
   * past the TestAmount schema's 21474836 s, so the request it returns fails ClientRequest.
   */
  iperf2AmountBeyondSchema(issues: readonly Issue[], request: unknown): boolean {
    const v = at(request, "amount.seconds");
    return issues.length > 0 && issues.every((i) => i.path.join(".") === "amount.seconds" && i.code === "too_big") && typeof v === "number" && v <= 2 ** 31 / 100;
  },

  /**
   * iperf 2: decodeServerReport joins 64-bit counts (total bytes, lost, out of order, datagrams) past 2^53, which the
   * ServerReport schema (safe integers) rejects: a report can be decoded that encodeServerReport would refuse.
   */
  iperf2ReportCountsBeyondSchema(issues: readonly Issue[], report: unknown): boolean {
    return onlyTooBig(issues, ["totalBytes", "lost", "outOfOrder", "datagrams"], TWO_64, (p) => at(report, p));
  },

  /**
   * iperf 2: UdpServerSession.onDatagram throws Iperf2WireError("bad-value", "server report: ...") when a flow's
   * sequence numbers reach 2^53 (a FIN with sequence -2^63, or a data datagram with a large high word): the
   * receiver counts go past safe integers and encodeServerReport refuses them. The FIN gets no report, and each
   * resent FIN throws again; the Bun glue's socket error handler swallows it, a node:dgram listener (Deno) would not.
   */
  iperf2UdpServerReportOverflow(e: Error): boolean {
    return e instanceof Iperf2WireError && e.code === "bad-value" && e.message.startsWith("server report:");
  },
};
