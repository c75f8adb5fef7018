import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../../src/errors.ts";
import { OPTIONS, parseIperf2Args } from "./args.ts";

const run = (line: string) => {
  const c = parseIperf2Args(line.split(" ").filter(Boolean));
  if (c.kind !== "run") throw new Error(`not a run: ${c.kind}`);
  return c.plan;
};

describe("iperf 2 command lines", () => {
  test("the Tencent guide's client", () => {
    const p = run("-c 10.0.0.1 -b 2048M -t 300 -P 8");
    expect(p.role).toBe("client");
    if (p.role !== "client") return;
    expect(p.host).toBe("10.0.0.1");
    expect(p.rate).toEqual({ value: 2147483648, units: "bps" });
    expect(p.amount).toEqual({ kind: "time", seconds: 300 });
    expect(p.parallel).toBe(8);
    expect(p.port).toBe(5001);
    expect(p.len).toBe(131072);
  });

  test("server with every option the issue lists", () => {
    const p = run("-s -p 27000 -u -B 127.0.0.1 -i 0.5 -e -D");
    expect(p).toMatchObject({ role: "server", port: 27000, udp: true, bind: { host: "127.0.0.1" }, intervalS: 0.5, enhanced: true, daemon: true });
  });

  test("getopt spellings: attached values, bundles, long names", () => {
    const p = run("-c127.0.0.1 -p5002 -ue -yC -l200 --no-udp-fin");
    expect(p).toMatchObject({ role: "client", host: "127.0.0.1", port: 5002, udp: true, enhanced: true, csv: true, len: 200, noUdpFin: true });
    expect(run("--client ::1 --parallel 4 --dualtest --listenport 5003")).toMatchObject({ parallel: 4, dual: true, listenPort: 5003 });
  });

  test("UDP defaults: 1 Mbit/s binary, 1470-byte datagrams (1450 over IPv6)", () => {
    const p = run("-c h -u");
    if (p.role !== "client") throw new Error();
    expect(p.rate).toEqual({ value: 1048576, units: "bps" });
    expect(p.len).toBe(1470);
    const v6 = run("-c ::1 -u -V");
    expect(v6.len).toBe(1450);
    expect(run("-c h")).toMatchObject({ rate: null, len: 131072, lenSet: false });
    expect(run("-c h -l 100")).toMatchObject({ len: 100, lenSet: true });
  });

  test("-n wins over -t; -b pps; -S names and hex; -B with port", () => {
    expect(run("-c h -t 5 -n 100K")).toMatchObject({ amount: { kind: "bytes", bytes: 102400 } });
    expect(run("-c h -u -b 1000pps")).toMatchObject({ rate: { value: 1000, units: "pps" } });
    expect(run("-c h -S 0x10").tos).toBe(16);
    expect(run("-c h -S ef").tos).toBe(0xb8);
    expect(run("-c h -S af11").tos).toBe(0x28);
    expect(run("-c h -B 127.0.0.1:6000").bind).toEqual({ host: "127.0.0.1", port: 6000 });
    expect(run("-c h -B [::1]:6000").bind).toEqual({ host: "::1", port: 6000 });
    // A device is refused by name, never dropped (our sockets take no SO_BINDTODEVICE).
    expect(() => run("-s -B 127.0.0.1%lo")).toThrow("iperf: -B 127.0.0.1%lo: anyperf does not bind to a device (SO_BINDTODEVICE)");
  });

  test("help and version", () => {
    expect(parseIperf2Args(["-h"]).kind).toBe("help");
    expect(parseIperf2Args(["-v"]).kind).toBe("version");
  });

  test("mistakes are one-line UserErrors naming the fix", () => {
    for (const bad of ["", "-s -c h", "-c h -y J", "-c h -f x", "-c h -p 70000", "-c h --bogus", "-c h -P 0", "-c h -t 0", "-c h -r -R", "-c h -u -d", "-c h -b fast"]) {
      let err: unknown;
      try {
        parseIperf2Args(bad.split(" ").filter(Boolean));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UserError);
      expect((err as Error).message).not.toContain("\n");
    }
  });

  test("iperf 2 options anyperf does not run are refused by name, not as unknown", () => {
    for (const flag of ["--working-load", "--working-load-cca", "--udp-l4s", "--udp-l4s-video"]) {
      expect(() => parseIperf2Args(["-c", "h", flag])).toThrow(new RegExp(`^iperf: ${flag} \\(.*\\) is not implemented in anyperf's client: drop it`));
    }
    for (const flag of ["--histograms", "--tcp-write-times"]) expect(() => parseIperf2Args(["-s", flag])).toThrow(`iperf: ${flag} on a server`);
  });

  test("--isochronous[=FPS:MEAN,STDDEV] and --ipg: frames, -e implied, stock's defaults and units; refusals in one line", () => {
    const plan = (...a: string[]) => {
      const c = parseIperf2Args(["-c", "h", ...a]);
      if (c.kind !== "run" || c.plan.role !== "client") throw new Error("not a client");
      return c.plan;
    };
    expect(plan("--isochronous")).toMatchObject({ udp: false, enhanced: true, isochronous: { perSecond: 60 } });
    expect(plan("-u", "--isochronous")).toMatchObject({ enhanced: true, isochronous: { perSecond: 60, meanBps: 20e6, stddevBps: 0, ipgMs: 0 } });
    // k/m/g are bits, K/M/G bytes (x 8), all decimal, as iperf 2's bitorbyte_atof.
    expect(plan("-u", "--isochronous=30:2m,100k", "--ipg", "0.1").isochronous).toEqual({ perSecond: 30, meanBps: 2e6, stddevBps: 1e5, ipgMs: 0.1 });
    expect(plan("-u", "--isochronous=24:1.5M").isochronous).toEqual({ perSecond: 24, meanBps: 12e6, stddevBps: 0, ipgMs: 0 });
    const refused: [string[], string][] = [
      [["--isochronous", "-l", "80"], "-l 80: an --isochronous frame opens with its 92-byte burst header"],
      [["--isochronous", "--ipg", "1"], "iperf: --ipg is for UDP frames"],
      [["-u", "--isochronous", "-b", "10m"], "iperf: --isochronous with -b"],
      [["-u", "--isochronous", "-R"], "iperf: --isochronous with -R/--full-duplex/-d/-r"],
      [["-u", "--isochronous", "-l", "100"], "-l 100: an --isochronous datagram carries the 108-byte header"],
      [["-u", "--isochronous=60"], "iperf: --isochronous=60: write it FPS:MEAN[,STDDEV]"],
      [["-u", "--isochronous=60:0"], "the mean must be more than zero"],
      [["-u", "--isochronous=60:20x"], "20x is not a rate"],
      [["-u", "--isochronous", "30:1m,0"], "iperf: --isochronous takes its value after '=': --isochronous=30:1m,0"],
      [["-u", "--ipg", "1"], "iperf: --ipg without --isochronous"],
      [["-u", "--isochronous", "--ipg", "-1"], "iperf: --ipg -1: the gap between a frame's datagrams is 0 to 1000 ms"],
    ];
    for (const [args, message] of refused) expect(() => plan(...args)).toThrow(message);
  });

  test("--tcp-write-times and --histograms[=W<u|m>,BINS,LOW,HIGH]: write times on, -e implied, 2.1.8's defaults; refusals in one line", () => {
    const plan = (...a: string[]) => {
      const c = parseIperf2Args(["-c", "h", ...a]);
      if (c.kind !== "run" || c.plan.role !== "client") throw new Error("not a client");
      return c.plan;
    };
    expect(plan("--tcp-write-times")).toMatchObject({ writeTimes: true, enhanced: true, histograms: undefined });
    expect(plan("--histograms")).toMatchObject({ writeTimes: true, enhanced: true, histograms: { binUs: 100, unit: "us", width: 100, bins: 10_000, lowerCi: 5, upperCi: 95 } });
    expect(plan("--histograms=1m,100,10,90").histograms).toEqual({ binUs: 1000, unit: "ms", width: 1, bins: 100, lowerCi: 10, upperCi: 90 });
    expect(plan().writeTimes).toBe(false);
    expect(() => plan("--histograms=5")).toThrow("iperf: --histograms=5: the bin width takes its unit, u (µs) or m (ms)");
    expect(() => plan("--histograms=5u,10,5,200")).toThrow("the upper bound is a percentage");
    for (const a of [["-u"], ["-R"], ["--full-duplex"], ["-d"], ["--bounceback"]]) {
      expect(() => plan("--histograms", ...a)).toThrow("iperf: --histograms with");
      expect(() => plan("--tcp-write-times", ...a)).toThrow("iperf: --tcp-write-times with");
    }
  });

  test("--connect-only[=N]: N connections per thread (10 without N); -u, -R, -i with it refused in one line", () => {
    const count = (...a: string[]) => {
      const c = parseIperf2Args(["-c", "h", ...a]);
      return c.kind === "run" && c.plan.role === "client" ? c.plan.connectOnly : "not a client";
    };
    expect([count("--connect-only"), count("--connect-only=3"), count()]).toEqual([10, 3, undefined]);
    for (const other of [["-u"], ["-R"], ["-i", "1"]]) expect(() => parseIperf2Args(["-c", "h", "--connect-only", ...other])).toThrow("iperf: --connect-only with");
  });

  test("--trip-times: UDP and TCP we send; with -R, -C, -d, -r or --full-duplex refused in one line; TCP -l under its burst header too", () => {
    for (const a of [["-u"], [], ["-l", "92"]]) {
      const c = parseIperf2Args(["-c", "h", "--trip-times", ...a]);
      expect(c.kind === "run" && c.plan.role === "client" && c.plan.tripTimes).toBe(true);
    }
    for (const a of [["-R"], ["-u", "-R"], ["-u", "-C"], ["-d"], ["-r"], ["--full-duplex"]]) expect(() => parseIperf2Args(["-c", "h", "--trip-times", ...a])).toThrow("iperf: --trip-times:");
    expect(() => parseIperf2Args(["-c", "h", "--trip-times", "-l", "64"])).toThrow("-l 64: a --trip-times write opens with its 92-byte burst header; pass -l 92 or more");
  });

  test("--txstart-time: an epoch time for a TCP stream we send (enhanced lines, as stock); elsewhere refused in one line", () => {
    const c = parseIperf2Args(["-c", "h", "--txstart-time", "1796460862.5"]);
    expect(c.kind === "run" && c.plan.role === "client" && [c.plan.txStartS, c.plan.enhanced]).toEqual([1796460862.5, true]);
    for (const other of [["-u"], ["-R"], ["--full-duplex"], ["-d"], ["-r"], ["-C"], ["--bounceback"]]) {
      expect(() => parseIperf2Args(["-c", "h", "--txstart-time", "1796460862", ...other])).toThrow("iperf: --txstart-time with");
    }
    expect(() => parseIperf2Args(["-c", "h", "--txstart-time", "soon"])).toThrow("--txstart-time");
  });

  test("--bounceback resolves as 2.1.8 does: 100-byte requests, 10 per second, -i 1 unless a period or -i is given", () => {
    const plan = (...a: string[]) => {
      const c = parseIperf2Args(["-c", "h", ...a]);
      if (c.kind !== "run" || c.plan.role !== "client") throw new Error("not a client plan");
      return c.plan.bounceback;
    };
    expect(plan("--bounceback")).toEqual({ size: 100, replySize: 100, burst: 10, periodS: 1, holdUs: 0, quickAck: true, defaultInterval: true });
    expect(plan("--bounceback=3", "--bounceback-no-quickack", "--bounceback-hold", "2", "--bounceback-period", "0.5")).toMatchObject({ burst: 3, quickAck: false, holdUs: 2000, periodS: 0.5, defaultInterval: false });
    expect(plan("--bounceback", "--bounceback-request", "200", "--bounceback-reply", "300")).toMatchObject({ size: 200, replySize: 300 });
    expect(plan("--bounceback", "-l", "128")).toMatchObject({ size: 128, replySize: 128 });
    expect(plan("--bounceback", "--bounceback-period", "0")).toMatchObject({ periodS: 0, burst: 1 });
    expect(plan()).toBeUndefined();
  });

  test("--bounceback combinations not run here, and its options alone, are refused in one line", () => {
    for (const a of [["-u"], ["-P", "2"], ["-R"], ["-n", "1M"], ["-b", "1m"], ["--bounceback-request", "60", "--bounceback-reply", "300"], ["--bounceback-request", "40"]]) {
      expect(() => parseIperf2Args(["-c", "h", "--bounceback", ...a])).toThrow(UserError);
    }
    expect(() => parseIperf2Args(["-c", "h", "--bounceback-hold=10"])).toThrow("--bounceback-hold without --bounceback");
  });

  test("README's --bounceback table has a row for every --bounceback option the client takes", () => {
    const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### iperf 2: `--bounceback` in our client"));
    const rows = section.slice(0, section.indexOf("\n### ")).split("\n").filter((l) => l.startsWith("| `"));
    const firstCells = rows.map((r) => r.split("|")[1]!);
    const options = ["--bounceback", ...Object.keys(OPTIONS).filter((k) => k.startsWith("bounceback")).map((k) => `--${k}`)];
    for (const o of options) expect(firstCells.some((c) => new RegExp(`\`${o}[ =\\[\`]`).test(c)), o).toBe(true);
  });
});
