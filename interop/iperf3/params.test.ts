import { describe, expect, test } from "bun:test";
import { decodeParams, encodeParams, streamCount, TestParams } from "./params.ts";
import { ClientStreamDecoder, Iperf3ProtocolError } from "./framing.ts";
import { IErrno } from "./error-codes.ts";
import { Errno } from "../../lib/errno.ts";
import { CONTROL_CAPTURES, loadControlCapture } from "../../tests/fixtures/iperf3/capture.ts";

const enc = (s: string) => new TextEncoder().encode(s);

function capturedParams(name: string): Uint8Array {
  const m = new ClientStreamDecoder().push(loadControlCapture(name).client).find((x) => x.kind === "params");
  if (!m || m.kind !== "params") throw new Error("no params");
  return m.json;
}

function failure(json: string): Iperf3ProtocolError {
  try {
    decodeParams(enc(json));
  } catch (e) {
    if (e instanceof Iperf3ProtocolError) return e;
    throw e;
  }
  throw new Error(`accepted: ${json}`);
}

describe("parameters", () => {
  test.each(CONTROL_CAPTURES)("%s: decode then encode gives the captured bytes", (name) => {
    const json = capturedParams(name);
    expect(encodeParams(decodeParams(json))).toBe(new TextDecoder().decode(json));
  });

  test("captured values land in the right fields", () => {
    const bidir = decodeParams(capturedParams("iperf3-bidir-control.txt"));
    expect(bidir).toMatchObject({ protocol: "tcp", timeS: 2, bidirectional: true, reverse: false, parallel: 1, len: 131072, bandwidth: 10_000_000 });
    expect(streamCount(bidir)).toBe(2);
    const udp64 = decodeParams(capturedParams("iperf3-udp-64bit-control.txt"));
    expect(udp64).toMatchObject({ protocol: "udp", len: 100, bandwidth: 8000, udpCounters64bit: true });
    expect(decodeParams(capturedParams("iperf3-bytes-n-control.txt"))).toMatchObject({ timeS: 0, bytes: 1048576 });
    expect(decodeParams(capturedParams("iperf3-blocks-k-control.txt"))).toMatchObject({ timeS: 0, blocks: 20, len: 32768 });
    expect(decodeParams(capturedParams("iperf3-omit-control.txt"))).toMatchObject({ omitS: 1, timeS: 1 });
    expect(decodeParams(capturedParams("iperf3-parallel2-control.txt")).parallel).toBe(2);
  });

  test("a bare iperf3 -c encodes like the stock client (docs/protocols/iperf3.md §4)", () => {
    const p = TestParams.parse({ protocol: "tcp", len: 131072 });
    expect(encodeParams(p)).toBe(
      '{"tcp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}',
    );
  });

  test("every optional key in the 3.12 order", () => {
    // Not reverse: a paced sender of ours refuses a burst (below).
    const p = TestParams.parse({
      protocol: "udp", omitS: 2, serverAffinity: 1, timeS: 3, mss: 1400, noDelay: true, parallel: 4, window: 262144, len: 1400,
      bandwidth: 1e8, fqRate: 5e8, burst: 10, tos: 0xb8, flowLabel: 7, title: "t", extraData: "x", congestion: "cubic",
      getServerOutput: true, udpCounters64bit: true, repeatingPayload: true, zerocopy: true, dontFragment: true, authToken: "dG9r",
    });
    expect(encodeParams(p)).toBe(
      '{"udp":true,"omit":2,"server_affinity":1,"time":3,"num":0,"blockcount":0,"MSS":1400,"nodelay":true,"parallel":4,' +
        '"window":262144,"len":1400,"bandwidth":100000000,"fqrate":500000000,"pacing_timer":1000,"burst":10,"TOS":184,"flowlabel":7,' +
        '"title":"t","extra_data":"x","congestion":"cubic","get_server_output":1,"udp_counters_64bit":1,"repeating_payload":1,"zerocopy":1,' +
        '"dont_fragment":1,"authtoken":"dG9r","client_version":"3.12"}',
    );
    expect(decodeParams(enc(encodeParams(p)))).toEqual({ ...p, clientVersion: "3.12" });
  });

  test("an empty object means a 10 s single-stream TCP test, like a 3.12 server", () => {
    expect(decodeParams(enc("{}"))).toMatchObject({ protocol: "tcp", timeS: 10, parallel: 1, len: 131072 });
  });

  test("unknown keys from later clients are ignored", () => {
    expect(decodeParams(enc('{"tcp":true,"a_later_key":1,"gso":0,"gro":0,"parallel":2}')).parallel).toBe(2);
  });

  test("3.12's unsigned -1 reads as -1 and then fails range checks clearly", () => {
    const e = failure('{"tcp":true,"omit":18446744073709551615}');
    expect(e.message).toContain('"omit"');
    expect(e.iErrno).toBe(IErrno.IERECVPARAMS);
  });

  test.each([
    ['{"tcp":true,"parallel":"4"}', '"parallel"'],
    ['{"tcp":true,"parallel":0}', '"parallel"'],
    ['{"tcp":true,"parallel":129}', '"parallel"'],
    ['{"tcp":true,"len":2.5}', '"len"'],
    ['{"tcp":true,"len":2000000}', '"len"'],
    ['{"udp":true,"len":15}', "UDP"],
    ['{"udp":true,"len":65508}', "UDP"],
    ['{"tcp":true,"time":86401}', '"time"'],
    ['{"tcp":true,"title":5}', '"title"'],
    ['{"tcp":true,"congestion":"a-name-longer-than-15"}', '"congestion"'],
    ["[1,2]", "object"],
    ["null", "object"],
    ["{", "not valid JSON"],
    ["\u00ff\u00fe", "not valid JSON"],
  ])("refuses %s", (json, mention) => {
    const e = failure(json);
    expect(e.message).toContain(mention);
    expect(e.iErrno).toBe(IErrno.IERECVPARAMS);
    expect([Errno.EINVAL, Errno.EBADMSG] as number[]).toContain(e.errno);
  });

  test("end conditions and modes that cannot go together", () => {
    expect(failure('{"tcp":true,"num":10,"blockcount":2}').iErrno).toBe(IErrno.IEENDCONDITIONS);
    expect(failure('{"tcp":true,"reverse":true,"bidirectional":true}').iErrno).toBe(IErrno.IEREVERSEBIDIR);
    expect(failure('{"sctp":true}').iErrno).toBe(IErrno.IEPROTOCOL);
  });

  test("3.16-3.21 options the server does not run are refused with IEUNIMP, their absence (gso/gro 0) is not", () => {
    for (const [json, name] of [
      ['{"tcp":true,"mptcp":true}', "mptcp"],
      ['{"udp":true,"gso":1,"gso_dg_size":1460,"gso_bf_size":65000,"gro":1,"gro_bf_size":65000}', "gso"],
      ['{"udp":true,"gso":0,"gro":1}', "gro"],
      ['{"tcp":true,"skip_rx_copy":1}', "skip_rx_copy"],
    ] as const) {
      const e = failure(json);
      expect(e.iErrno).toBe(IErrno.IEUNIMP);
      expect(e.message).toContain(name);
    }
    expect(decodeParams(enc('{"udp":true,"gso":0,"gso_dg_size":0,"gso_bf_size":0,"gro":0,"gro_bf_size":0,"skip_rx_copy":0}')).protocol).toBe("udp");
  });

  test("a pacing timer or burst for a sender of ours (-R, --bidir at a rate) is refused with IEUNIMP; the client's own is its business", () => {
    for (const [json, name] of [
      ['{"tcp":true,"reverse":true,"bandwidth":1000000,"pacing_timer":2000}', "pacing_timer"],
      ['{"udp":true,"bidirectional":true,"bandwidth":1000000,"burst":10}', "burst"],
    ] as const) {
      const e = failure(json);
      expect(e.iErrno).toBe(IErrno.IEUNIMP);
      expect(e.message).toContain(name);
    }
    expect(decodeParams(enc('{"tcp":true,"reverse":true,"bandwidth":1000000,"pacing_timer":1000}')).reverse).toBe(true);
    expect(decodeParams(enc('{"udp":true,"bandwidth":1000000,"pacing_timer":2000,"burst":10}')).burst).toBe(10);
  });

  test("flags are read by presence, as 3.12 does", () => {
    expect(decodeParams(enc('{"tcp":true,"reverse":false}')).reverse).toBe(true);
  });
});
