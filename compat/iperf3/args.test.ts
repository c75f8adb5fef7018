import { describe, expect, test } from "bun:test";
import { parseIperf3Args, type ParsedCommand } from "./args.ts";
import { tokenize } from "./options.ts";
import { parseDscp } from "./dscp.ts";
import { encodeParams } from "../../interop/iperf3/params.ts";
import { ClientStreamDecoder } from "../../interop/iperf3/framing.ts";
import { UserError } from "../../src/errors.ts";
import { CONTROL_CAPTURES_312, loadControlCapture } from "../../tests/fixtures/iperf3/capture.ts";
import type { ClientPlan, ServerPlan } from "./plan.ts";

const client = (argv: string): ClientPlan => {
  const r = parseIperf3Args(argv.split(/\s+/).filter(Boolean));
  if (r.kind !== "run" || r.plan.role !== "client") throw new Error("not a client plan");
  return r.plan;
};
const server = (argv: string): ServerPlan => {
  const r = parseIperf3Args(argv.split(/\s+/).filter(Boolean));
  if (r.kind !== "run" || r.plan.role !== "server") throw new Error("not a server plan");
  return r.plan;
};
const fails = (argv: string): string => {
  try {
    parseIperf3Args(argv.split(/\s+/).filter(Boolean));
  } catch (e) {
    if (e instanceof UserError) return e.message;
    throw e;
  }
  throw new Error(`accepted: ${argv}`);
};

describe("captured command lines produce the captured parameter JSON", () => {
  // Our client's parameters are 3.12's (it announces 3.12): a newer client's are not its to reproduce.
  const withClient = CONTROL_CAPTURES_312.filter((n) => loadControlCapture(n).clientCommand);
  test.each(withClient)("%s", (name) => {
    const c = loadControlCapture(name);
    const argv = c.clientCommand!.split(/\s+/).slice(1); // drop "iperf3"
    const plan = client(argv.join(" "));
    const m = new ClientStreamDecoder().push(c.client).find((x) => x.kind === "params");
    const want = new TextDecoder().decode(m?.kind === "params" ? m.json : new Uint8Array());
    // UDP without -l: 3.12 took 32768 from the loopback control connection's MSS.
    const params = plan.udpLenFromMss ? { ...plan.params, len: 32768 } : plan.params;
    expect(encodeParams(params)).toBe(want);
  });
});

describe("getopt_long tokenizing", () => {
  test("clusters, attached values, long prefixes, =values", () => {
    expect(tokenize(["-uR", "-P4", "-l128K", "--bid", "--time=3", "--json-stream", "-c", "h"]).tokens).toEqual([
      { name: "udp" },
      { name: "reverse" },
      { name: "parallel", value: "4" },
      { name: "length", value: "128K" },
      { name: "bidir" },
      { name: "time", value: "3" },
      { name: "json-stream" },
      { name: "client", value: "h" },
    ]);
  });

  test("aliases fold (--bandwidth is --bitrate); optional args only after '='", () => {
    expect(tokenize(["--bandwidth", "5M", "--debug", "--timestamps=%T"]).tokens).toEqual([
      { name: "bitrate", value: "5M" },
      { name: "debug" },
      { name: "timestamps", value: "%T" },
    ]);
  });

  test("--timestamps, --debug and -d run without a value (their argument is optional)", () => {
    expect(client("-c h --timestamps").output.timestamps).toBe("%c ");
    expect(client("-c h --timestamps=%T").output.timestamps).toBe("%T");
    expect(client("-c h -d").output.debug).toBe(true);
    expect(client("-c h --debug").output.debug).toBe(true);
    expect(server("-s --timestamps -d").output).toMatchObject({ timestamps: "%c ", debug: true });
  });

  test("ambiguous and unknown options", () => {
    expect(fails("--b 5 -c h")).toContain("ambiguous");
    expect(fails("--frobnicate -c h")).toContain("unrecognized option '--frobnicate'");
    expect(fails("-c h -q")).toContain("invalid option -- 'q'");
    expect(fails("-c")).toContain("requires an argument");
    expect(fails("-c h --udp=1")).toContain("doesn't allow an argument");
  });
});

describe("client defaults and limits (docs/protocols/iperf3.md §1)", () => {
  test("bare -c", () => {
    const p = client("-c 127.0.0.1");
    expect(p.port).toBe(5201);
    expect(p.params).toMatchObject({ protocol: "tcp", timeS: 10, len: 131072, parallel: 1, bandwidth: 0, omitS: 0, pacingTimerUs: 1000 });
    expect(p.output).toMatchObject({ format: "a", intervalS: 1, json: false });
  });

  test("UDP: 2^20 bit/s and a block size from the MSS unless -l", () => {
    expect(client("-c h -u").params.bandwidth).toBe(1048576);
    expect(client("-c h -u").udpLenFromMss).toBe(true);
    expect(client("-c h -u -l 1400").udpLenFromMss).toBe(false);
    expect(client("-c h -u -l 1400").params.len).toBe(1400);
  });

  test("suffixes: -b decimal, -l/-n/-w binary, -b rate/burst", () => {
    const p = client("-c h -R -b 10M/20 -l 32K -w 256K");
    expect(p.params).toMatchObject({ bandwidth: 10_000_000, burst: 20, len: 32768, window: 262144 });
    expect(client("-c h -n 1M").params).toMatchObject({ bytes: 1048576, timeS: 0 });
    expect(client("-c h -k 20").params).toMatchObject({ blocks: 20, timeS: 0 });
    expect(client("-c h -b 1G").params.bandwidth).toBe(1e9);
  });

  test("TOS in C notation, DSCP by value or name", () => {
    expect(client("-c h -S 0x34").params.tos).toBe(0x34);
    expect(client("-c h -S 064").params.tos).toBe(52);
    expect(client("-c h --dscp ef").params.tos).toBe(46 << 2);
    expect(client("-c h --dscp 10").params.tos).toBe(40);
    expect(parseDscp("af41")).toBe(34);
    expect(parseDscp("cs7")).toBe(56);
    expect(parseDscp("64")).toBeUndefined();
  });

  test("-A as 3.12 reads it (strtol: the leading number, the rest ignored); --sctp is named as unsupported", () => {
    expect(client("-c h -A 0/1").affinity).toBe(0);
    expect(client("-c h -A 0/1").params.serverAffinity).toBeUndefined();
    expect(client("-c h -A 1,0x1").params.serverAffinity).toBe(1);
    expect(server("-s -A 1").affinity).toBe(1);
    expect(fails("-c h -A abc")).toContain("unable to set CPU affinity");
    expect(fails("-c h -A 2000")).toContain("unable to set CPU affinity");
    expect(fails("-c h --sctp")).toContain("--sctp is not supported by anyperf");
    for (const f of ["--mptcp", "-m", "--gsro", "--skip-rx-copy", "--json-stream-full-output"]) {
      expect(fails(`-c h ${f}`)).toMatch(/^--(mptcp|gsro|skip-rx-copy|json-stream-full-output) is not supported by anyperf \(.+\): drop it$/);
    }
    expect(client("-c h --cntl-ka").cntlKa).toEqual({});
    expect(client("-c h --cntl-ka=10/5/3").cntlKa).toEqual({ idleS: 10, intervalS: 5, count: 3 });
    expect(client("-c h --cntl-ka=/5").cntlKa).toEqual({ intervalS: 5 });
    expect(client("-c h").cntlKa).toBeUndefined();
    expect(fails("-c h --cntl-ka=0")).toContain("--cntl-ka values must be positive");
    expect(fails("-s --mptcp")).toContain("--mptcp is not supported by anyperf");
  });

  test("everything a stock client may send", () => {
    const p = client("-c h -R -P 8 -O 2 -t 5 -M 1400 -N -C cubic -T title --extra-data x --get-server-output -Z --repeating-payload -A 1,2 -6 -J");
    expect(p.params).toMatchObject({ reverse: true, parallel: 8, omitS: 2, timeS: 5, mss: 1400, noDelay: true, congestion: "cubic", title: "title", extraData: "x", getServerOutput: true, zerocopy: true, repeatingPayload: true, serverAffinity: 2 });
    expect(p.family).toBe("ipv6");
    expect(p.affinity).toBe(1);
    expect(p.output.json).toBe(true);
  });

  test.each([
    ["-c h -P 129", "number of parallel streams too large (maximum = 128)"],
    ["-c h -t 86401", "test duration too long (maximum = 86400 seconds)"],
    ["-c h -l 2M", "block size too large (maximum = 1048576 bytes)"],
    ["-c h -u -l 8", "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)"],
    ["-c h -w 1G", "socket buffer size too large (maximum = 536870912 bytes)"],
    ["-c h -M 10000", "TCP MSS too large (maximum = 9216 bytes)"],
    ["-c h -S 256", "bad TOS value (must be between 0 and 255 inclusive)"],
    ["-c h -O 61", "bogus value for --omit"],
    ["-c h -b 1M/1001", "invalid burst count (maximum = 1000)"],
    // Our sender paces with its own bucket: a burst or a pacing tick for it would be another test (with -R the server paces).
    ["-c h -b 1M/10", "-b 1M/10: anyperf's sender paces with its own token bucket, not 3.x's block bursts"],
    ["-c h --bidir --pacing-timer 2000", "--pacing-timer 2000: anyperf's sender paces with its own token bucket, not 3.x's timer ticks"],
    ["-c h -t 3 -n 1M", "only one test end condition (-t, -n, -k) may be specified"],
    ["-c h -R --bidir", "cannot be both reverse and bidirectional"],
    ["-c h -p 0", "port number must be between 1 and 65535 inclusive"],
    ["-c h -f x", "bad format specifier"],
    ["-c h -i 0.05", "invalid report interval"],
    ["-c h --rcv-timeout 5000", "client receive timeout is valid only in receiving mode"],
    ["-c h -1", "some option you are trying to set is server only"],
    ["-s -u", "some option you are trying to set is client only"],
    ["-s -c h", "cannot be both server and client"],
    ["-t 3", "must either be a client (-c) or server (-s)"],
    ["-c h -P four", '-P "four" is not an integer'],
    ["-c h -F /etc/passwd", "-F/--file is not supported"],
    ["-c h extra", "unexpected argument 'extra'"],
  ])("%s -> %s", (argv, msg) => {
    const m = fails(argv);
    expect(m).toContain(msg);
    expect(m).toMatch(/: .*(pass|drop|keep|add|spell|see|options)/);
  });
});

describe("server options", () => {
  test("defaults", () => {
    expect(server("-s")).toMatchObject({ port: 5201, oneOff: false, maxTests: 8, idleTimeoutS: 0, bitrateLimit: 0, rcvTimeoutMs: 120000, maxDurationS: 0 });
  });

  test("the issue's server command line", () => {
    const p = server("-s -p 25001 -B 127.0.0.1 -1 -J -i 2 --idle-timeout 30 --rcv-timeout 5000 --server-bitrate-limit 1G/2 --server-max-duration 60 --max-tests 3");
    expect(p).toMatchObject({ port: 25001, bind: "127.0.0.1", oneOff: true, idleTimeoutS: 30, rcvTimeoutMs: 5000, bitrateLimit: 1e9, bitrateLimitIntervalS: 2, maxDurationS: 60, maxTests: 3 });
    expect(p.output).toMatchObject({ json: true, intervalS: 2 });
  });

  test("a device (-B host%dev, -c host%dev, --bind-dev) is refused by name, never dropped", () => {
    expect(fails("-s -B ::1%lo")).toMatch(/^-B ::1%lo: anyperf does not bind to a device \(SO_BINDTODEVICE\)/);
    expect(fails("-c 127.0.0.1%lo")).toMatch(/^-c 127.0.0.1%lo: anyperf does not bind to a device/);
    expect(fails("-c 127.0.0.1 --bind-dev lo")).toMatch(/^--bind-dev lo: anyperf does not bind to a device/);
  });

  test("help and version", () => {
    expect(parseIperf3Args(["-h"])).toEqual({ kind: "help" } satisfies ParsedCommand);
    expect(parseIperf3Args(["-v"])).toEqual({ kind: "version" } satisfies ParsedCommand);
  });
});
