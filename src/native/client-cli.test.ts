import { describe, expect, test } from "bun:test";
import { parseClientArgs } from "./client-cli.ts";
import { parseLoopbackArgs } from "./loopback-cli.ts";
import { requestOf, planOf, halves, remoteEnd } from "./request.ts";
import type { Results } from "../report/result.ts";
import { UserError } from "../errors.ts";

describe("anyperf client's command line", () => {
  test("defaults: port 5300, one stream of 1 MiB writes, 5 s, forward", () => {
    const { plan, target } = parseClientArgs(["192.0.2.7"]);
    expect(target).toEqual({ host: "192.0.2.7", port: 5300, token: undefined, direction: "forward", linkSpeedBps: undefined, lengthGiven: false });
    expect(plan).toMatchObject({ streams: 1, durationS: 5, bytes: 0, bufferBytes: 1 << 20, transport: "tcp", test: "stream" });
  });

  test("the shared test-shape options mean what they mean for loopback", () => {
    const args = ["-t", "3", "-P", "4", "-u", "-b", "100M", "-l", "1200", "--warmup", "1", "--cooldown", "2", "-i", "0.5"];
    const c = parseClientArgs(["h", ...args]).plan;
    const l = parseLoopbackArgs(args).plan;
    expect({ ...c, workers: undefined }).toEqual({ ...l, workers: undefined });
    expect(c).toMatchObject({ durationS: 3, streams: 4, transport: "udp", bitsPerSecond: 100e6, datagramBytes: 1200, warmupS: 1, cooldownS: 2, intervalS: 0.5 });
  });

  test("--responsiveness: 4 load streams per direction unless -P says otherwise", () => {
    const r = parseClientArgs(["h", "--responsiveness", "-t", "3"]);
    expect(r.responsiveness).toBe(true);
    expect(r.plan).toMatchObject({ streams: 4, durationS: 3, test: "stream", transport: "tcp" });
    expect(parseClientArgs(["h", "--responsiveness", "-P", "8"]).plan.streams).toBe(8);
    expect(parseClientArgs(["h"]).responsiveness).toBe(false);
  });

  test("-p, -R, --bidir, --token, --link-speed, -n, an IPv6 host in brackets", () => {
    const r = parseClientArgs(["[::1]", "-p", "6000", "-R", "--token", "T", "--link-speed", "1G", "-n", "10M"]);
    expect(r.target).toEqual({ host: "::1", port: 6000, token: "T", direction: "reverse", linkSpeedBps: 1e9, lengthGiven: false });
    expect(parseClientArgs(["h", "-l", "64K"]).target.lengthGiven).toBe(true);
    expect(r.plan.bytes).toBe(10 * 1024 * 1024);
    expect(parseClientArgs(["h", "--bidir"]).target.direction).toBe("bidir");
  });

  test("HOST:PORT and [V6]:PORT name the port; a bare IPv6 address keeps its colons", () => {
    for (const [arg, host, port] of [["h:5201", "h", 5201], ["[::1]:5201", "::1", 5201], ["::1", "::1", 5300], ["[fe80::1]", "fe80::1", 5300], ["h", "h", 5300]] as const) {
      const r = parseClientArgs([arg]);
      expect([r.target.host, r.target.port, r.portGiven]).toEqual([host, port, port !== 5300]);
    }
  });

  test("mistakes are one line naming the flag and the fix, exit code 2", () => {
    for (const [argv, pattern] of [
      [[], /no server given: pass the host/],
      [["h", "-p", "70000"], /-p 70000: not a port/],
      [["h:70000"], /h:70000: not a port/],
      [["h:5201", "-p", "5202"], /h:5201 and -p 5202 both name the port: pass one/],
      [["h", "-R", "--bidir"], /-R and --bidir both given/],
      [["h", "--rr", "1,1", "-R"], /-R applies to bulk tests/],
      [["h", "-n", "1M", "-t", "2"], /-n and -t both given/],
      [["h", "-n", "1M", "--crr"], /-n counts bulk bytes/],
      [["h", "--responsiveness", "--rr", "1,1"], /^--rr does not apply to --responsiveness/],
      [["h", "--responsiveness", "-R"], /^-R does not apply to --responsiveness/],
      [["h", "--responsiveness", "--bidir"], /^--bidir does not apply/],
      [["h", "--responsiveness", "-u"], /^-u does not apply/],
      [["h", "--responsiveness", "-n", "1M"], /^-n does not apply/],
      [["h", "--responsiveness", "--csv", "x.csv"], /^--csv does not apply/],
      [["h", "--responsiveness", "--link-speed", "1G"], /^--link-speed does not apply/],
    ] as const) {
      try {
        parseClientArgs([...argv]);
        throw new Error(`no error for ${argv.join(" ")}`);
      } catch (e) {
        expect(e).toBeInstanceOf(UserError);
        expect((e as UserError).message).toMatch(pattern);
        expect((e as UserError).exitCode).toBe(2);
      }
    }
  });
});

describe("the request on the wire and each end's half", () => {
  test("the server's plan is the client's plan, mirrored by direction", () => {
    const { plan } = parseClientArgs(["h", "-P", "3", "-u", "-b", "10M", "-l", "100", "--warmup", "1"]);
    const req = requestOf(plan, "bidir");
    const server = planOf(req);
    for (const k of ["transport", "test", "streams", "bytes", "warmupS", "cooldownS", "bufferBytes", "datagramBytes", "bitsPerSecond", "packetsPerSecond", "requestBytes", "responseBytes"] as const) {
      expect(server[k]).toEqual(plan[k]);
    }
    expect(halves(req, "client")).toEqual({ sends: true, receives: true });
    expect(halves({ direction: "forward", test: "stream" }, "server")).toEqual({ sends: false, receives: true });
    expect(halves({ direction: "reverse", test: "stream" }, "server")).toEqual({ sends: true, receives: false });
    expect(halves({ direction: "forward", test: "rr" }, "client")).toEqual({ sends: true, receives: false });
  });

  test("-n puts 0 s on the wire: the run ends by bytes", () => {
    expect(requestOf(parseClientArgs(["h", "-n", "5M"]).plan, "forward")).toMatchObject({ durationS: 0, bytes: 5 * 1024 * 1024 });
  });

  test("what travels back: intervals stay home, a receiving-only end names its summary as receiver, errors bounded", () => {
    const fig = { bytes: 10, seconds: 1, throughput_bps: 80 };
    const r: Results = {
      tool: "anyperf", version: "0.1.0", mode: "native", role: "server", transport: "tcp", test: "stream", started_at: "", interrupted: false,
      phases: { warmup_s: 0, measured_s: 1, cooldown_s: 0 }, summary: fig, totals: { received_bytes: 10 },
      streams: [{ ...fig, id: 0, side: "recv", connections: 1 }], intervals: [{ start: 0, end: 1, phase: "measuring", sum: fig, streams: [] }],
      cpu: {}, errors: Array.from({ length: 100 }, () => "x".repeat(2000)),
    };
    const end = remoteEnd(r, { send_max: 1 });
    expect("intervals" in end).toBe(false);
    expect(end.receiver).toEqual(fig);
    expect(end.sender).toBeUndefined();
    expect(end.errors).toHaveLength(64);
    expect(end.errors[0]).toHaveLength(1000);
    expect(end.tcp_buffers).toEqual({ send_max: 1 });
  });
});
