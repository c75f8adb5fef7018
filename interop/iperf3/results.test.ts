import { describe, expect, test } from "bun:test";
import { decodeResults, encodeResults } from "./results.ts";
import { ClientStreamDecoder, Iperf3ProtocolError, ServerStreamDecoder } from "./framing.ts";
import { IErrno } from "./error-codes.ts";
import { CONTROL_CAPTURES, loadControlCapture } from "../../tests/fixtures/iperf3/capture.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

const WITH_RESULTS = CONTROL_CAPTURES.filter((n) => !/terminate|error/.test(n));

function capturedResults(name: string): { client: Uint8Array; server: Uint8Array; version: string } {
  const c = loadControlCapture(name);
  const cm = new ClientStreamDecoder().push(c.client).find((m) => m.kind === "results");
  const sm = new ServerStreamDecoder().push(c.server).find((m) => m.kind === "results");
  if (cm?.kind !== "results" || sm?.kind !== "results") throw new Error(`no results in ${name}`);
  return { client: cm.json, server: sm.json, version: c.version };
}

describe("results", () => {
  test.each(WITH_RESULTS)("%s: both documents decode and re-encode byte for byte (-1 as that version prints it)", (name) => {
    const { client, server, version } = capturedResults(name);
    // 3.12 prints -1 as 18446744073709551615; 3.21 as -1.
    for (const json of [client, server]) expect(encodeResults(decodeResults(json), { negativeAsUnsigned: version === "3.12" })).toBe(dec(json));
  });

  test("3.12's unsigned -1 becomes -1", () => {
    const r = decodeResults(capturedResults("iperf3-tcp-control.txt").server);
    expect(r.senderHasRetransmits).toBe(-1);
    expect(r.streams[0]).toMatchObject({ id: 1, bytes: 5111808, retransmits: -1, endTimeS: 2.000204 });
    expect(r.congestionUsed).toBe("bbr");
    // Our own writer prints a real -1, which 3.12 reads fine (docs/protocols/iperf3.md §2.3).
    expect(encodeResults(r)).toContain('"sender_has_retransmits":-1');
  });

  // The 3.18 server's frame for `iperf3 -c 127.0.0.1 -t 2 -O 1 -u -b 10M` (3.18 client, read under strace).
  const FRAME_318 =
    '{"cpu_util_total":0.27925503584477562,"cpu_util_user":0,"cpu_util_system":0.27922174760590984,"sender_has_retransmits":-1,' +
    '"streams":[{"id":1,"bytes":2490368,"retransmits":-1,"jitter":0.00017905750296116544,"errors":0,"omitted_errors":0,' +
    '"packets":115,"omitted_packets":39,"start_time":0,"end_time":2.003843}]}';

  test("3.14+ omitted_errors/omitted_packets: read, and written back in their places byte for byte", () => {
    const r = decodeResults(enc(FRAME_318));
    expect(r.streams[0]).toMatchObject({ errors: 0, packets: 115, omitted: { errors: 0, packets: 39 } });
    expect(r.streams[0]!.extra).toBeUndefined();
    expect(encodeResults(r)).toBe(FRAME_318);
  });

  test("one of the omitted pair without the other is refused, as 3.18 refuses it", () => {
    const lone = FRAME_318.replace('"omitted_errors":0,', "");
    expect(() => decodeResults(enc(lone))).toThrow(/only one of "omitted_errors" and "omitted_packets"/);
  });

  test("bidir results carry ids 1 and 3", () => {
    const r = decodeResults(capturedResults("iperf3-bidir-control.txt").client);
    expect(r.streams.map((s) => s.id)).toEqual([1, 3]);
  });

  test("UDP receiver results carry jitter, errors and packets", () => {
    const r = decodeResults(capturedResults("iperf3-udp-control.txt").server);
    expect(r.streams[0]!.packets).toBe(8);
    expect(r.streams[0]!.jitterS).toBeGreaterThan(0);
    expect(r.senderHasRetransmits).toBe(-1);
  });

  test("extra per-stream keys survive a round trip after the standard ones", () => {
    const json = encodeResults({
      cpuUtilTotal: 1.5, cpuUtilUser: 1, cpuUtilSystem: 0.5, senderHasRetransmits: 0,
      streams: [{ id: 1, bytes: 10, retransmits: -1, jitterS: 0, errors: 0, packets: 0, startTimeS: 0, endTimeS: 1, extra: { rtt_p99_us: 40 } }],
    });
    expect(json).toBe(
      '{"cpu_util_total":1.5,"cpu_util_user":1,"cpu_util_system":0.5,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":10,"retransmits":-1,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1,"rtt_p99_us":40}]}',
    );
    expect(decodeResults(enc(json)).streams[0]!.extra).toEqual({ rtt_p99_us: 40 });
  });

  test.each([
    ['{"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[]}', "cpu_util_total"],
    ['{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0}', "streams"],
    ['{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":"9"}]}', "streams.0.bytes"],
    ['{"cpu_util_total":"x","cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[]}', "cpu_util_total"],
    ["nope", "not valid JSON"],
  ])("refuses %s", (json, mention) => {
    try {
      decodeResults(enc(json));
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(Iperf3ProtocolError);
      expect((e as Error).message).toContain(mention);
      expect((e as Iperf3ProtocolError).iErrno).toBe(IErrno.IERECVRESULTS);
    }
  });

  test("duplicate stream ids are an invalid-id error", () => {
    const s = '{"id":1,"bytes":0,"retransmits":0,"jitter":0,"errors":0,"packets":0}';
    expect(() => decodeResults(enc(`{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[${s},${s}]}`))).toThrow(
      expect.objectContaining({ iErrno: IErrno.IESTREAMID }),
    );
  });
});
