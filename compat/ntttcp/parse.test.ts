import { describe, expect, test } from "bun:test";
import { UserError } from "../../src/errors.ts";
import { detectDialect } from "./detect.ts";
import { parseLinuxArgs } from "./linux-args.ts";
import { parseCommand } from "./parse.ts";
import type { NtttcpPlan } from "./plan.ts";
import { parseWindowsArgs } from "./windows-args.ts";

const env = { cpus: 2 };
const words = (s: string) => s.split(/\s+/).filter(Boolean);
function plan(cmd: string, extra: Partial<typeof env> & { argv0?: string } = {}): NtttcpPlan {
  const r = parseCommand(words(cmd), { ...env, ...extra });
  if (r.kind !== "run") throw new Error("help");
  return r.plan;
}
function layout(p: NtttcpPlan) {
  return p.threads.map((t) => `${t.port}x${t.connections}`).join(" ");
}

describe("seed commands of the issue", () => {
  test("seed 1, both roles: -m 4 → 4 ports 5001-5004, 1 connection each, Linux sync on 5000, 300 s", () => {
    const r = plan("-r -m 4,*,10.0.0.5 -t 300");
    const s = plan("-s -m 4,*,10.0.0.5 -t 300");
    expect(r.dialect).toBe("linux");
    expect(r.ports).toEqual([5001, 5002, 5003, 5004]);
    expect(r.threads.every((t) => t.connections === 0 && t.host === "10.0.0.5")).toBe(true);
    expect(layout(s)).toBe("5001x1 5002x1 5003x1 5004x1");
    expect(s.totalConnections).toBe(4);
    expect(s.sync).toEqual({ kind: "linux", port: 5000, multiClient: false, lastClient: false });
    expect([s.warmup, s.duration, s.cooldown]).toEqual([0, 300, 0]);
    expect([s.writeSize, r.readSize]).toEqual([131072, 65536]);
  });

  test("seed 1 read as Windows: same ports, token ports +1000, 64 KiB buffers", () => {
    const s = plan("--windows -s -m 4,*,10.0.0.5 -t 300");
    expect(layout(s)).toBe("5001x1 5002x1 5003x1 5004x1");
    expect(s.sync).toEqual({ kind: "windows", offset: 1000 });
    expect(s.writeSize).toBe(65536);
    const r = plan("--windows -r -m 4,*,10.0.0.5 -t 300");
    expect(r.threads.every((t) => t.connections === 1)).toBe(true);
  });

  test("seed 2: Windows sender -ns → 8 threads, one connection per port, no sync", () => {
    const s = plan("-s -m 8,*,192.0.2.9 -ns -t 300");
    expect(s.dialect).toBe("windows");
    expect(s.role).toBe("sender");
    expect(s.sync).toEqual({ kind: "none" });
    expect(s.ports).toEqual([5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008]);
    expect(s.totalConnections).toBe(8);
    // The Linux receiver it pairs with: -r -m 8,*,ip -N → 8 ports, any number of connections each.
    const r = plan("-r -m 8,*,192.0.2.9 -N -t 300");
    expect(r.dialect).toBe("linux");
    expect(r.ports).toEqual(s.ports);
    expect(r.sync).toEqual({ kind: "none" });
  });

  test("seed 3: -m 1,0,ip -P 8 → 8 ports × 1 thread × 1 connection, CPU 0", () => {
    const s = plan("-s -m 1,0,192.168.1.10 -P 8 -t 60");
    expect(layout(s)).toBe([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `${5000 + i}x1`).join(" "));
    expect(s.threads.every((t) => t.cpu === 0)).toBe(true);
    const r = plan("-r -m 1,0,192.168.1.10 -P 8 -t 60");
    expect(r.ports).toHaveLength(8);
    expect(r.sync).toMatchObject({ kind: "linux", port: 5000 });
  });

  test("seed 4: Windows sender with -p 80 -wu 5 -cd 5 -v -xml c:\\test.xml", () => {
    const s = plan("-s -m 2,*,192.168.100.7 -t 30 -p 80 -wu 5 -cd 5 -v -xml c:\\test.xml");
    expect(s.dialect).toBe("windows");
    expect(s.ports).toEqual([80, 81]);
    expect(s.sync).toEqual({ kind: "windows", offset: 1000 });
    expect([s.warmup, s.duration, s.cooldown]).toEqual([5, 30, 5]);
    expect(s.outputs).toMatchObject({ verbose: true, xml: { path: "c:\\test.xml", append: true } });
  });
});

describe("ntttcp-for-linux parsing (checks recorded in ntttcp-linux-console-misc.txt)", () => {
  const lin = (s: string) => {
    const r = parseLinuxArgs(words(s), env);
    if (r.kind !== "run") throw new Error("help");
    return r;
  };
  test("-P before -m is overridden; -m before -P is not", () => {
    expect(lin("-r -P 8 -m 1,0,127.0.0.1").options.ports).toBe(1);
    expect(lin("-r -m 1,0,127.0.0.1 -P 8").options.ports).toBe(8);
  });
  test("-m 4,* binds 0.0.0.0", () => {
    const o = lin("-r -m 4,*").options;
    expect([o.ports, o.address]).toEqual([4, "0.0.0.0"]);
  });
  test("-n after -m multiplies; -n before -m is reset to 1", () => {
    const a = lin("-s127.0.0.1 -m 3,*,127.0.0.1 -n 2").options;
    const b = lin("-s127.0.0.1 -n 2 -m 3,*,127.0.0.1").options;
    expect([a.ports, a.threadsPerPort, a.connsPerThread]).toEqual([3, 2, 1]);
    expect([b.ports, b.threadsPerPort, b.connsPerThread]).toEqual([3, 1, 1]);
  });
  test("defaults: 16 × 4 × 1 to 5001, 60 s, sync", () => {
    const o = lin("-s 127.0.0.1").options;
    expect([o.ports, o.threadsPerPort, o.connsPerThread, o.basePort, o.duration, o.noSync]).toEqual([16, 4, 1, 5001, 60, false]);
    expect(plan("-s 127.0.0.1").totalConnections).toBe(64);
  });
  test("-6 with an IPv4 mapping address is rejected with status 255", () => {
    try {
      lin("-r -m 4,*,127.0.0.1 -6");
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).exitCode).toBe(255);
      expect((e as UserError).message).toContain("invalid ipv6 address provided");
    }
  });
  test("a CPU outside the machine is reported and the run stays unpinned", () => {
    const r = lin("-s127.0.0.1 -m 2,5,127.0.0.1");
    expect(r.messages).toContainEqual({ level: "ERR", text: "process_mappings: cpu specified is not in allowed scope" });
    expect(r.options.cpuAffinity).toBe(-1);
    expect(r.options.ports).toBe(2);
  });
  test("-ns is -n s (1 thread per port, sync stays on) and says so", () => {
    const r = lin("-s127.0.0.1 -m 2,*,127.0.0.1 -ns");
    expect(r.messages).toContainEqual({ level: "INFO", text: "invalid threads-per-server-port provided. use 1" });
    expect(r.options.noSync).toBe(false);
    const c = parseCommand(words("--linux -s127.0.0.1 -m 2,*,127.0.0.1 -ns"), env);
    expect(c.kind === "run" && c.notes.join()).toContain("-n s");
  });
  test("-xml is -x ml", () => {
    expect(lin("-s127.0.0.1 -m 2,*,127.0.0.1 -xml").options.xmlFile).toBe("ml");
  });
  test("-wu is an invalid option (usage, status 23)", () => {
    expect(() => parseLinuxArgs(words("-s127.0.0.1 -wu 5 -cd 5"), env)).toThrow(expect.objectContaining({ exitCode: 23 }));
  });
  test("-rb 1M is -r b, an invalid address (status 255)", () => {
    expect(() => parseLinuxArgs(words("-r -m 2,*,127.0.0.1 -rb 1M"), env)).toThrow(expect.objectContaining({ exitCode: 255 }));
  });
  test("clusters, attached and optional arguments", () => {
    const o = lin("-VNs127.0.0.1 -p5001 -x -j out.json -O").options;
    expect([o.verbose, o.noSync, o.role, o.address, o.basePort]).toEqual([true, true, "sender", "127.0.0.1", 5001]);
    expect([o.xmlFile, o.jsonFile, o.logFile]).toEqual(["ntttcp-for-linux-log.xml", "out.json", "ntttcp-for-linux-log.log"]);
  });
  test("long options, with = and unambiguous prefixes", () => {
    const o = lin("-s 127.0.0.1 --no-delay --fq-rate-limit=10G --show-tcp").options;
    expect([o.noDelay, o.fqRate, o.showTcpRetrans]).toEqual([true, 1e10, true]);
    expect(() => parseLinuxArgs(words("-s 127.0.0.1 --show"), env)).toThrow(/ambiguous/);
  });
  test("UDP send size is clamped to 65507 with the real message", () => {
    const r = lin("-s 127.0.0.1 -u");
    expect(r.options.sendSize).toBe(65507);
    expect(r.messages).toContainEqual({ level: "INFO", text: "the UDP send size is too big. use the max value" });
  });
  test("-b sets both I/O sizes with binary units; -B is decimal bits/s", () => {
    const o = lin("-s 127.0.0.1 -b 256k -B 1G").options;
    expect([o.sendSize, o.recvSize, o.bandwidth]).toEqual([262144, 262144, 1e9]);
  });
  test("-h is help, before any check", () => {
    expect(parseLinuxArgs(words("-r -s -h"), env)).toEqual({ kind: "help" });
  });
  test("-P × -n × -l layout: thread k = t·n + j → port B+t with l sockets", () => {
    const p = plan("-s 127.0.0.1 -P 2 -n 3 -l 2 -p 28001");
    expect(layout(p)).toBe("28001x2 28001x2 28001x2 28002x2 28002x2 28002x2");
    expect(p.threads.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(p.totalConnections).toBe(12);
  });
});

describe("Windows NTttcp parsing", () => {
  test("case-insensitive options and several mappings: thread i → port base+i whatever the host", () => {
    const o = parseWindowsArgs(words("-S -M 2,0,10.0.0.5 1,*,10.0.1.5 -NS -T 10"));
    expect(o.role).toBe("sender");
    expect(o.noSync).toBe(true);
    const p = plan("--windows -s -m 2,0,10.0.0.5 1,*,10.0.1.5 -ns -t 10");
    expect(p.threads.map((t) => `${t.host}:${t.port}/${t.cpu}`)).toEqual(["10.0.0.5:5001/0", "10.0.0.5:5002/0", "10.0.1.5:5003/null"]);
  });
  test("-P is -p (base port), as on Windows", () => {
    expect(plan("--windows -r -m 1,0,192.168.1.10 -P 8 -t 60").ports).toEqual([8]);
  });
  test("count mode without -t: 20480 buffers of 64 KiB per thread, warm-up ignored", () => {
    const p = plan("-s -m 1,*,10.0.0.5 -wu 5");
    expect(p.countBytesPerThread).toBe(20480 * 65536);
    expect(p.warmup).toBe(0);
  });
  test("-n after -t turns -t into the count-mode timeout", () => {
    const o = parseWindowsArgs(words("-s -m 1,*,h -t 30 -n 100"));
    expect([o.runTime, o.buffers, o.countTimeoutMs]).toEqual([null, 100, 30000]);
  });
  test("-u sets 128-byte buffers unless -l came first", () => {
    expect(parseWindowsArgs(words("-s -m 1,*,h -u -t 1")).bufferLen).toBe(128);
    expect(parseWindowsArgs(words("-s -m 1,*,h -l 1400 -u -t 1")).bufferLen).toBe(1400);
    expect(parseWindowsArgs(words("-s -m 1,*,h -u -l 1k -t 1")).bufferLen).toBe(1024);
  });
  test("Windows-only machinery is accepted and reported as ignored", () => {
    const o = parseWindowsArgs(words("-r -m 1,*,h -t 1 -na 0 -cfi -a 4"));
    expect(o.ignored.map((x) => x.option)).toEqual(["-na", "-cfi", "-a"]);
    expect(o.ignored.every((x) => x.reason.length > 10)).toBe(true);
  });
  test("bad command lines exit 9", () => {
    for (const c of ["-s -t 10 -ns", "-s -m 1,*", "-s -m 1,*,h -bogus", "-r -m 1,*,h -thr 10", "-s -m 1000,*,h -t 1"]) {
      expect(() => parseWindowsArgs(words(c))).toThrow(expect.objectContaining({ exitCode: 9 }));
    }
  });
  test("ntttcps / ntttcpr names set the default role and the dialect", () => {
    expect(plan("-m 1,*,10.0.0.5 -t 5", { argv0: "/usr/bin/ntttcps" })).toMatchObject({ role: "sender", dialect: "windows" });
    expect(plan("-m 1,*,10.0.0.5 -t 5", { argv0: "ntttcpr.exe" })).toMatchObject({ role: "receiver", dialect: "windows" });
  });
  test("a data port whose token port would pass 65535 is refused unless -ns", () => {
    expect(() => parseCommand(words("-s -m 1,*,h -p 65000 -t 1 -v"), env)).toThrow(UserError);
    expect(plan("-s -m 1,*,h -p 65000 -t 1 -ns").ports).toEqual([65000]);
  });
});

describe("dialect detection", () => {
  const d = (s: string) => detectDialect(words(s)).dialect;
  test("Windows markers", () => {
    for (const c of ["-s -m 1,*,h -ns", "-r -m 1,*,h -WU 5", "-r -m 1,*,h -xml", "-s -m 1,*,h -sb 1M", "-r -m 1,*,h -rb 1M", "-s -m 1,*,h -a 2", "-s -m 1,*,a 1,*,b"]) {
      expect(d(c)).toBe("windows");
    }
  });
  test("Linux markers", () => {
    for (const c of ["-r -m 1,*,h -N", "-s h -W 1", "-s h -C 1", "-s h -x", "-s h -j", "-s h -n 2", "-s h -B 1G", "-s10.0.0.1", "-s h -a 10.0.0.2", "-r -m 1,*,h -P 8"]) {
      expect(d(c)).toBe("linux");
    }
  });
  test("commands valid in both read as Linux; forced flags win; mixed is an error naming both", () => {
    expect(d("-r -m 4,*,10.0.0.5 -t 300")).toBe("linux");
    expect(d("--windows -r -m 4,*,10.0.0.5 -N")).toBe("windows");
    expect(() => d("-s -m 1,*,h -ns -N")).toThrow(/-ns.*-N|--windows or --linux/);
  });
});
