import { describe, expect, test } from "bun:test";
import { UserError } from "../../src/errors.ts";
import { atoi, breakArgs, breakArgsExplicit, convert } from "./getopt.ts";
import { GLOBAL_SPEC, parseNetperfArgs, unappliedOptionNotes } from "./netperf-args.ts";
import { NETSERVER_SPEC, parseNetserverArgs } from "./netserver-args.ts";
import type { NetperfPlan } from "./plan.ts";
import { getoptSpec } from "./option-table.ts";
import { TEST_OPTIONS, TEST_SPEC } from "./test-options.ts";

const plan = (argv: string): NetperfPlan => {
  const cmd = parseNetperfArgs(argv === "" ? [] : argv.split(" "));
  if (cmd.kind !== "run") throw new Error(`expected a run, got ${JSON.stringify(cmd)}`);
  return cmd.plan;
};

describe("netperf's value helpers", () => {
  test("break_args: one value sets both, commas pick a side", () => {
    expect(breakArgs("5")).toEqual(["5", "5"]);
    expect(breakArgs("5,")).toEqual(["5", ""]);
    expect(breakArgs(",6")).toEqual(["", "6"]);
    expect(breakArgsExplicit("5")).toEqual(["5", ""]);
  });

  test("convert: K/M/G binary, k/m/g decimal, anywhere in the word; atoi prefix", () => {
    expect(convert("64K")).toBe(65536);
    expect(convert("1M")).toBe(1048576);
    expect(convert("2k")).toBe(2000);
    expect(convert("-5000")).toBe(-5000);
    expect(convert("10x")).toBe(10);
    expect(atoi("  42abc")).toBe(42);
    expect(atoi("abc")).toBe(0);
  });
});

describe("netperf command line", () => {
  test("defaults match netperf", () => {
    const p = plan("");
    expect(p).toMatchObject({ host: "localhost", controlPort: 12865, test: "TCP_STREAM", testLength: 10, printHeaders: true, verbosity: 1, instances: 1 });
    expect(plan("-t tcp_rr")).toMatchObject({ test: "TCP_RR", requestSize: 1, responseSize: 1 });
  });

  test("the issue's commands", () => {
    expect(plan("-H 127.0.0.1 -l 300 -t UDP_STREAM -- -m 1")).toMatchObject({ test: "UDP_STREAM", testLength: 300, localSendSize: 1, remoteSendSize: -1 });
    expect(plan("-H 127.0.0.1 -l 300 -t TCP_RR -- -r 1,1")).toMatchObject({ test: "TCP_RR", requestSize: 1, responseSize: 1 });
    const o = plan("-H 127.0.0.1 -t TCP_RR -- -r 1,1 -o THROUGHPUT,P99_LATENCY");
    expect(o).toMatchObject({ output: "csv", outputSelection: "THROUGHPUT,P99_LATENCY" });
    expect(plan("-H 127.0.0.1 -t TCP_RR --instances 16 -- -r 1,1").instances).toBe(16);
    expect(plan("--instances=4 -H 127.0.0.1").instances).toBe(4);
  });

  test("omni: -r without -d is request/response, as in netperf 2.7.0; an explicit -d wins in either order", () => {
    expect(plan("-t omni -- -r 1")).toMatchObject({ test: "TCP_RR", requestSize: 1, responseSize: 1 });
    expect(plan("-t omni -- -r 64K -b 12")).toMatchObject({ test: "TCP_RR", requestSize: 65536, responseSize: 65536, firstBurst: 12 });
    expect(plan("-t omni -- -T udp -r ,4")).toMatchObject({ test: "UDP_RR", requestSize: 1, responseSize: 4 });
    expect(plan("-t omni -- -d send -r 1,1")).toMatchObject({ test: "TCP_STREAM", requestSize: 1, responseSize: 1 });
    expect(plan("-t omni -- -r 1 -d recv").test).toBe("TCP_MAERTS");
    expect(plan("-t omni -- -m 1").test).toBe("TCP_STREAM");
    expect(plan("-t TCP_STREAM -- -r 1").test).toBe("TCP_STREAM");
  });

  test("omni without -d: each -m/-M size names a direction as netperf 2.7.0's implicit_direction does", () => {
    // runemomniagg2.sh's `-M ,64K`: the local receive size, so a receive test.
    expect(plan("-t omni -- -M ,64K")).toMatchObject({ test: "TCP_MAERTS", localRecvSize: 65536 });
    expect(plan("-t omni -- -m ,4K").test).toBe("TCP_MAERTS");
    expect(plan("-t omni -- -M 4K").test).toBe("TCP_STREAM");
    // Both directions: request/response.
    expect(plan("-t omni -- -m 1K,1K").test).toBe("TCP_RR");
    expect(plan("-t omni -- -m 1K -M ,1K").test).toBe("TCP_RR");
    // -d replaces what came before it and stops what comes after; a -d naming no direction is a send.
    expect(plan("-t omni -- -M ,64K -d send").test).toBe("TCP_STREAM");
    expect(plan("-t omni -- -d send -M ,64K").test).toBe("TCP_STREAM");
    expect(plan("-t omni -- -d abc").test).toBe("TCP_STREAM");
    // -c with no direction is netperf's connect/close test without data: refused, naming TCP_CC.
    expect(() => plan("-t omni -- -c")).toThrow("-t TCP_CC");
    expect(plan("-t omni -- -c -r 1").test).toBe("TCP_CRR");
  });

  test("glued values, clustered flags, optional CPU rate only before a digit", () => {
    const p = plan("-l2 -cC -H 127.0.0.1 -p 26001");
    expect(p).toMatchObject({ testLength: 2, localCpu: true, remoteCpu: true, remoteCpuRate: 0, controlPort: 26001 });
    const q = plan("-C 100 -c -t TCP_RR");
    expect(q).toMatchObject({ remoteCpu: true, remoteCpuRate: 100, localCpu: true, test: "TCP_RR" });
  });

  test("-o/-O/-k take a list only when the next word is not an option", () => {
    expect(plan("-t TCP_RR -- -o -r 32")).toMatchObject({ output: "csv", outputSelection: undefined, requestSize: 32, responseSize: 32 });
    expect(plan("-t TCP_RR -- -k all")).toMatchObject({ output: "keyval", outputSelection: "all" });
  });

  test("pairs: -P sets both ports from one value, -m only the local size, -M remote first, -s/-S both buffers", () => {
    expect(plan("-- -P 26010")).toMatchObject({ localDataPort: 26010, remoteDataPort: 26010 });
    expect(plan("-- -P ,26011")).toMatchObject({ localDataPort: 0, remoteDataPort: 26011 });
    expect(plan("-- -m 1")).toMatchObject({ localSendSize: 1, remoteSendSize: -1 });
    expect(plan("-- -M 4K,8K")).toMatchObject({ remoteRecvSize: 4096, localRecvSize: 8192 });
    expect(plan("-- -s 64K -S ,128K").socketBuffers).toEqual({ local: { send: 65536, recv: 65536 }, remote: { send: -1, recv: 131072 } });
  });

  test("global pairs: -a/-A alignment, -o/-O offset, -T, -y, -Y; -H/-L name a host and a family", () => {
    const p = plan("-a 16,32 -A 4K -o ,3 -O 1, -T 0,1 -y 2 -Y 16,32 -H h1,4 -L h2,6");
    expect(p.align).toEqual({ local: { send: 16, recv: 32 }, remote: { send: 4096, recv: 4096 } });
    expect(p.offset).toEqual({ local: { send: 0, recv: 3 }, remote: { send: 1, recv: 0 } });
    expect(p).toMatchObject({ cpuAffinity: { local: 0, remote: 1 }, socketPrio: { local: 2, remote: 2 }, socketTos: { local: 16, remote: 32 } });
    expect(p).toMatchObject({ host: "h1", localControlHost: "h2", family: "ipv6" });
  });

  test("test -H/-L: data addresses without a /prefix, the family from the second part", () => {
    expect(plan("-- -H 10.0.0.1/24,4 -L ::1")).toMatchObject({ remoteDataAddress: "10.0.0.1", localDataAddress: "::1", dataFamily: "ipv4" });
    expect(plan("-- -L ,inet6")).toMatchObject({ localDataAddress: undefined, dataFamily: "ipv6" });
  });

  test("-K keeps netperf's bug: a remote name shorter than 3 characters is ignored", () => {
    expect(plan("-- -K cubic").congestion).toEqual({ local: "cubic", remote: "cubic" });
    expect(plan("-- -K ,ab").congestion).toEqual({ local: "", remote: "" });
    expect(plan("-- -K ,bbr").congestion).toEqual({ local: "", remote: "bbr" });
  });

  test("count mode, -P 0, -v, -f, -B, -i clamps", () => {
    expect(plan("-l -5000 -t TCP_RR").testLength).toBe(-5000);
    expect(plan("-P 0 -v 0 -f k -B tag")).toMatchObject({ printHeaders: false, verbosity: 0, format: "k", brand: "tag" });
    expect(plan("-i 50,1")).toMatchObject({ iterationMax: 30, iterationMin: 3, confidenceLevel: 99, confidenceInterval: 0.05 });
    expect(plan("-f x").format).toBe("m");
  });

  test("-D: interval from the first part, its sign dropped, 1 s when empty, never 0; -r: result-only confidence", () => {
    expect(plan("-H h").demoIntervalS).toBeUndefined();
    expect(plan("-D -0.20 -H h").demoIntervalS).toBe(0.2);
    expect(plan("-D 2").demoIntervalS).toBe(2);
    expect(plan("-D ,1000").demoIntervalS).toBe(1);
    expect(plan("-D 0").demoIntervalS).toBe(0.01);
    expect(plan("-i 10,3").resultConfidenceOnly).toBe(false);
    expect(plan("-i 10,3 -r")).toMatchObject({ resultConfidenceOnly: true, iterationMax: 10, iterationMin: 3 });
  });

  test("TCP_CRR -p min,max is read, and said to be not applied rather than silently dropped", () => {
    expect(plan("-t TCP_CRR -- -p 20000,30000")).toMatchObject({ clientPortMin: 20000, clientPortMax: 30000 });
    expect(unappliedOptionNotes(plan("-t TCP_CRR -- -p 20000,30000"))).toEqual([
      "anyperf netperf: test option -p 20000,30000 is not applied: each TCP_CRR connection takes an ephemeral local port\n",
    ]);
    expect(unappliedOptionNotes(plan("-t TCP_CRR"))).toEqual([]);
    expect(unappliedOptionNotes(plan("-t TCP_RR -- -p 20000,30000"))).toEqual([]);
  });

  test("errors name the cause and the fix", () => {
    const fails = (argv: string, re: RegExp) => {
      try {
        parseNetperfArgs(argv.split(" "));
        throw new Error("no error");
      } catch (e) {
        expect(e).toBeInstanceOf(UserError);
        expect((e as Error).message).toMatch(re);
      }
    };
    fails("-t SCTP_STREAM", /not supported.*use TCP_STREAM/);
    fails("-z", /invalid option -- 'z'/);
    fails("-l", /requires an argument/);
    fails("-t UDP_STREAM -l -100", /needs a TCP test/);
    fails("-- -P 70000", /outside 0..65535/);
    fails("-H h --instances 0", /--instances needs a count/);
    // A test anyperf runs once (TCP_MSS, TCP_CC, TCP_SENDFILE, UUID) is never run once while --instances asked for more.
    fails("-H h -t TCP_MSS --instances 3", /--instances 3 with TCP_MSS: anyperf runs TCP_MSS once/);
  });

  test("-V and -h print instead of running", () => {
    expect(parseNetperfArgs(["-V"])).toEqual({ kind: "print", text: "Netperf version 2.7.0\n", exitCode: 0, stdout: true });
    expect(parseNetperfArgs(["-h"])).toMatchObject({ kind: "print", exitCode: 1, stdout: false });
  });
});

describe("netserver command line", () => {
  test("the issue's options", () => {
    const cmd = parseNetserverArgs("-p 26500 -L 127.0.0.1 -4 -D -f".split(" "));
    expect(cmd).toEqual({
      kind: "run",
      plan: { port: 26500, listenAddress: "127.0.0.1", family: "ipv4", foreground: true, serial: true, passphrase: undefined, verbosity: 1, debug: 0, maxTests: 1024 },
    });
    expect(parseNetserverArgs(["-6"])).toMatchObject({ plan: { family: "ipv6", port: 12865 } });
    expect(parseNetserverArgs(["-L", "::1,6", "--max-tests", "400"])).toMatchObject({ plan: { listenAddress: "::1", family: "ipv6", maxTests: 400 } });
    expect(() => parseNetserverArgs(["-p", "x"])).toThrow(UserError);
  });
});

describe("the tests netperf runs with its classic messages", () => {
  const classic = (argv: string) => {
    const cmd = parseNetperfArgs(argv.split(" "));
    if (cmd.kind !== "classic") throw new Error(`expected a classic test, got ${JSON.stringify(cmd)}`);
    return cmd;
  };

  test("TCP_CC (any case) is planned as TCP_CRR: one-byte request and response, as netperf reports them", () => {
    const c = classic("-t tcp_cc -l 2");
    expect(c.test).toBe("TCP_CC");
    expect(c.plan).toMatchObject({ test: "TCP_CRR", testName: "TCP_CC", requestSize: 1, responseSize: 1, testLength: 2 });
    expect(classic("-t TCP_CC -- -r 5,7").plan).toMatchObject({ requestSize: 5, responseSize: 7 });
  });

  test("TCP_SENDFILE is a TCP_STREAM; -F keeps the whole local path (netperf's BUFSIZ), not 31 characters", () => {
    const path = `/tmp/${"d".repeat(40)}/fill`;
    const c = classic(`-t TCP_SENDFILE -F ${path}`);
    expect(c.plan).toMatchObject({ test: "TCP_STREAM", testName: "TCP_SENDFILE" });
    expect(c.plan.fillFile.local).toBe(path);
  });

  test("TCP_MSS and UUID", () => {
    expect(classic("-t TCP_MSS").test).toBe("TCP_MSS");
    expect(classic("-t uuid -- -u abc").plan.uuid).toBe("abc");
  });

  test("what they do not apply is said on stderr: TCP_CC's -p port range, TCP_SENDFILE's -i", () => {
    expect(unappliedOptionNotes(classic("-t TCP_CC -- -p 20000,30000").plan)).toEqual([
      "anyperf netperf: test option -p 20000,30000 is not applied: each TCP_CC connection takes an ephemeral local port\n",
    ]);
    expect(unappliedOptionNotes(classic("-t TCP_SENDFILE -i 3,3").plan)).toEqual([
      "anyperf netperf: -i is not applied to TCP_SENDFILE: it runs once (use TCP_STREAM for confidence intervals)\n",
    ]);
    expect(unappliedOptionNotes(classic("-t TCP_CC").plan)).toEqual([]);
  });

  test("options netperf 2.7.0's scan_sockets_args does not read are refused for TCP_MSS, TCP_CC and TCP_SENDFILE, not ignored", () => {
    for (const name of ["TCP_MSS", "TCP_CC", "TCP_SENDFILE"] as const) {
      expect(() => parseNetperfArgs(["-t", name, "--", "-o", "THROUGHPUT"])).toThrow("netperf: invalid option -- 'o'");
      expect(() => parseNetperfArgs(["-t", name, "--", "-K", "cubic"])).toThrow("netperf: invalid option -- 'K'");
      expect(classic(`-t ${name} -- -z -w 3`).test).toBe(name);
    }
    // UUID reads omni's options, as netperf does (scan_omni_args).
    expect(classic("-t UUID -- -o -u abc").plan.uuid).toBe("abc");
    expect(() => parseNetperfArgs(["-t", "UUID", "--", "-z"])).toThrow("netperf: invalid option -- 'z'");
  });

  test("-m and -M convert the whole word for them, as scan_sockets_args does: -m is the send size, -M what netserver receives", () => {
    expect(classic("-t TCP_SENDFILE -- -m 5,6 -M 7,8").plan).toMatchObject({ localSendSize: 5, remoteSendSize: -1, remoteRecvSize: 7, localRecvSize: 0 });
    // convert() multiplies for each suffix letter anywhere in the word: 1 * 1024 * 1000000.
    expect(classic("-t TCP_MSS -- -M 1K,2m").plan.remoteRecvSize).toBe(1024000000);
    expect(classic("-t TCP_CC -- -M ,6").plan.remoteRecvSize).toBe(0);
    // The omni tests keep their pairs.
    expect(plan("-t TCP_STREAM -- -m 5,6 -M 7,8")).toMatchObject({ localSendSize: 5, remoteSendSize: 6, remoteRecvSize: 7, localRecvSize: 8 });
  });

  test("-- -h prints netperf's sockets_usage for them and omni_usage for the others, on stdout, exit 1", () => {
    const usage = (argv: string) => {
      const cmd = parseNetperfArgs(argv.split(" "));
      if (cmd.kind !== "print") throw new Error(`expected a print, got ${JSON.stringify(cmd)}`);
      // netperf writes a test's usage on stdout, its global usage on stderr; both exit 1.
      expect([cmd.exitCode, cmd.stdout]).toEqual([1, true]);
      return cmd.text;
    };
    expect(usage("-t TCP_CC -- -h")).toContain("\nTCP/UDP BSD Sockets Test Options:\n");
    expect(usage("-t TCP_CC -- -h")).toContain("    -m bytes          Set the send size (TCP_STREAM, UDP_STREAM)\n");
    expect(usage("-t TCP_STREAM -- -h")).toContain("\nOMNI and Migrated BSD Sockets Test Options:\n");
    expect(usage("-t omni -- -h")).toContain("    -d direction      Explicitly set test direction based on bitwise OR\n");
  });

  test("a name this netperf does not know either is refused in one line naming the ones it runs", () => {
    expect(() => parseNetperfArgs(["-t", "STREAM_RR"])).toThrow(/test 'STREAM_RR' is not supported by anyperf: use .*TCP_CC, TCP_SENDFILE.*UUID/);
  });
});

describe("option tables", () => {
  // Each letter with its ':' when it takes a value, in any order.
  const letters = (spec: string) => [...spec.matchAll(/.:?/g)].map((m) => m[0]).sort();

  test("the derived getopt strings accept exactly netperf 2.7.0's and netserver 2.7.0's letters", () => {
    expect(letters(GLOBAL_SPEC)).toEqual(letters("A:a:b:B:CcdD:f:F:H:hi:I:jk:K:l:L:n:NO:o:P:p:rSs:t:T:v:VW:w:y:Y:Z:46"));
    expect(letters(NETSERVER_SPEC)).toEqual(letters("DdfhL:n:Np:v:VZ:46"));
    expect(letters(TEST_SPEC)).toEqual(letters("aBb:cCd:De:FgG:hH:i:Ij:kK:l:L:m:M:nNoOp:P:r:R:s:S:t:T:u:UVw:W:46"));
    expect(letters(getoptSpec(TEST_OPTIONS, "migrated"))).toEqual(letters(TEST_SPEC));
    // TCP_MSS, TCP_CC and TCP_SENDFILE: netperf 2.7.0's SOCKETS_ARGS.
    expect(letters(getoptSpec(TEST_OPTIONS, "classic"))).toEqual(letters("b:CDnNhH:L:m:M:p:P:r:R:s:S:T:Vw:W:z46"));
  });

  test("the shared options mean the same to netperf and netserver", () => {
    const server = (argv: string[]) => {
      const cmd = parseNetserverArgs(argv);
      if (cmd.kind !== "run") throw new Error(`expected a run, got ${JSON.stringify(cmd)}`);
      return cmd.plan;
    };
    expect(parseNetserverArgs(["-V"]) as unknown).toEqual(parseNetperfArgs(["-V"]));
    for (const argv of [["-4"], ["-6"], ["-6", "-4"], ["-Z", "x".repeat(700)]]) {
      const c = plan(argv.join(" "));
      expect(server(argv)).toMatchObject({ family: c.family, passphrase: c.passphrase });
    }
    // netserver keeps the family it has when -L names none it knows; netperf's -L resets it.
    expect(server(["-6", "-L", "h,x"]).family).toBe("ipv6");
    expect(plan("-6 -L h,x").family).toBe("any");
  });
});
