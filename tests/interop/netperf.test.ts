import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeOmniRequest } from "../../interop/netperf/omni-request.ts";
import { buildOmniRequest } from "../../interop/netperf/test-request.ts";
import { boundPorts, expectSidesAgree, finish, n, hasStockNetperf, keyvals, listenerPid, oursNetperf, oursNetserver, rawExchange, stockNetperf, stockNetserver, waitListening, type Proc } from "./netperf-harness.ts";

/**
 * anyperf netserver driven by stock netperf 2.7.0, and anyperf netperf driving stock netserver, on 127.0.0.1 with
 * ports 26600-26999 (control 26600/26601, 26602 for a detached server, 26698 never listened on, data ports from
 * 26610 up, each test its own pair). Every test is -l 2 and bounded; both sides' counts, as netperf reports them
 * with -k, must agree.
 */

if (!hasStockNetperf()) throw new Error("stock netperf 2.7.0 is not installed: run scripts/install-peers (Debian package 'netperf')");

const OURS = 26600;
const STOCK = 26601;
const DETACHED = 26602;
const NOBODY = 26698;
const LIMIT_MS = 25_000;
const SELECT = [
  "ELAPSED_TIME",
  "THROUGHPUT",
  "TRANSACTION_RATE",
  "LOCAL_BYTES_SENT",
  "LOCAL_BYTES_RECVD",
  "REMOTE_BYTES_SENT",
  "REMOTE_BYTES_RECVD",
  "LOCAL_SEND_CALLS",
  "REMOTE_RECV_CALLS",
  "REMOTE_SEND_CALLS",
  "P99_LATENCY",
  "LOCAL_SEND_SIZE",
  "REMOTE_SEND_SIZE",
  "LOCAL_TRANSPORT_RETRANS",
  "REMOTE_TRANSPORT_RETRANS",
].join(",");

let ourServer: Proc;
let stockServer: Proc;
let nextPort = 26610;
const dataPorts = () => {
  const p = nextPort;
  nextPort += 2;
  return `${p},${p + 1}`;
};

beforeAll(async () => {
  ourServer = oursNetserver(["-D", "-p", String(OURS)]);
  stockServer = stockNetserver(["-D", "-p", String(STOCK)]);
  await Promise.all([waitListening(OURS, 10_000), waitListening(STOCK, 10_000)]);
  // Something else on our port (a server left over from an interrupted run) would take these tests' traffic.
  if (listenerPid(OURS) !== ourServer.pid) throw new Error(`port ${OURS} is held by pid ${listenerPid(OURS)}, not by this run's anyperf netserver`);
});

afterAll(async () => {
  ourServer.kill();
  stockServer.kill();
  await Promise.all([ourServer.done, stockServer.done]);
});


const TESTS: [string, string[]][] = [
  ["TCP_STREAM", []],
  ["TCP_MAERTS", []],
  ["UDP_STREAM", ["-m", "1"]],
  ["TCP_RR", ["-r", "1,1"]],
  ["TCP_CRR", ["-r", "1,1"]],
  ["UDP_RR", ["-r", "1,1"]],
];

describe("stock netperf against anyperf netserver", () => {
  for (const [name, opts] of TESTS) {
    test(
      `${name} -l 2: both sides agree`,
      async () => {
        const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "2", "-P", "0", "-t", name, "--", ...opts, "-P", dataPorts(), "-k", SELECT]), LIMIT_MS);
        expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
        expectSidesAgree(name, keyvals(r.out), "REMOTE");
      },
      LIMIT_MS + 5000,
    );
  }

  test(
    "-c -C: the server measures its CPU and answers with real figures",
    async () => {
      const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "2", "-c", "-C", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "REMOTE_CPU_UTIL,REMOTE_CPU_METHOD,REMOTE_CPU_COUNT,REMOTE_SD"]), LIMIT_MS);
      expect(r.code).toBe(0);
      const kv = keyvals(r.out);
      expect(kv.REMOTE_CPU_METHOD).toBe("S");
      expect(n(kv, "REMOTE_CPU_UTIL")).toBeGreaterThan(0);
      expect(n(kv, "REMOTE_CPU_UTIL")).toBeLessThanOrEqual(100);
      expect(n(kv, "REMOTE_CPU_COUNT")).toBeGreaterThan(0);
      expect(n(kv, "REMOTE_SD")).toBeGreaterThan(0);
    },
    LIMIT_MS + 5000,
  );

  test(
    "count mode -l -5000: exactly 5000 transactions on both sides",
    async () => {
      const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "-5000", "-P", "0", "-t", "TCP_RR", "--", "-r", "32,1024", "-D", "-P", dataPorts(), "-k", "LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,REMOTE_BYTES_SENT"]), LIMIT_MS);
      expect(r.code).toBe(0);
      const kv = keyvals(r.out);
      expect(n(kv, "REMOTE_RECV_CALLS")).toBe(5000);
      expect(n(kv, "REMOTE_BYTES_SENT")).toBe(5000 * 1024);
    },
    LIMIT_MS + 5000,
  );

  test(
    "done criterion: TCP_RR -r 1,1 and UDP_STREAM -m 1 print normal netperf reports",
    async () => {
      const rr = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "2", "-t", "TCP_RR", "--", "-r", "1,1", "-P", dataPorts()]), LIMIT_MS);
      expect(rr.code).toBe(0);
      expect(rr.out).toMatch(/^MIGRATED TCP REQUEST\/RESPONSE TEST from .* : demo : first burst 0\nLocal \/Remote\n/);
      expect(rr.out).toMatch(/\n16384  131072 1        1       2\.\d\d  +\d+\.\d\d   \n16384  131072\n$/);
      const udp = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "2", "-t", "UDP_STREAM", "--", "-m", "1", "-P", dataPorts()]), LIMIT_MS);
      expect(udp.code).toBe(0);
      expect(udp.out).toMatch(/\n212992       1   2\.\d\d +\d+ +\d+ +\d+\.\d\d\n212992           2\.\d\d +\d+ +\d+\.\d\d\n\n$/);
    },
    2 * LIMIT_MS,
  );

  test(
    "-i 3,3: every round asks for the first round's data port again, and gets it",
    async () => {
      for (const name of ["TCP_RR", "UDP_RR"]) {
        const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "1", "-i", "3,3", "-P", "0", "-t", name, "--", "-k", "THROUGHPUT,CONFIDENCE_ITERATION"]), LIMIT_MS);
        expect({ name, code: r.code, err: r.err }).toEqual({ name, code: 0, err: "" });
        expect(keyvals(r.out).CONFIDENCE_ITERATION).toBe("3");
      }
    },
    2 * LIMIT_MS,
  );

  test("finished tests leave no data port bound: only the control port stays", async () => {
    // Releasing happens on the Workers' threads; give it a moment.
    for (const until = Date.now() + 2000; boundPorts(ourServer.pid).length > 1 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    expect(boundPorts(ourServer.pid)).toEqual([OURS]);
  });

  test(
    "many clients at once: 40 stock netperf TCP_RR, every one completes",
    async () => {
      const runs = Array.from({ length: 40 }, () =>
        finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "2", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "TRANSACTION_RATE"]), LIMIT_MS),
      );
      const done = await Promise.all(runs);
      for (const r of done) {
        expect(r.code).toBe(0);
        expect(n(keyvals(r.out), "TRANSACTION_RATE")).toBeGreaterThan(0);
      }
    },
    LIMIT_MS + 10_000,
  );
});

describe("anyperf netperf against stock netserver", () => {
  for (const [name, opts] of TESTS) {
    test(
      `${name} -l 2: both sides agree`,
      async () => {
        const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "2", "-P", "0", "-t", name, "--", ...opts, "-P", dataPorts(), "-k", SELECT]), LIMIT_MS);
        expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
        expectSidesAgree(name, keyvals(r.out), "LOCAL");
      },
      LIMIT_MS + 5000,
    );
  }

  test(
    "done criterion: TCP_RR -r 1,1 -o THROUGHPUT,P99_LATENCY prints the two values",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "2", "-t", "TCP_RR", "--", "-r", "1,1", "-P", dataPorts(), "-o", "THROUGHPUT,P99_LATENCY"]), LIMIT_MS);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^MIGRATED TCP REQUEST\/RESPONSE TEST .*\nThroughput,99th Percentile Latency Microseconds\n\d+\.\d\d,\d+\n$/);
    },
    LIMIT_MS + 5000,
  );

  test(
    "-i 3,3: three rounds on one control connection, their mean and the confidence width",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "1", "-i", "3,3", "-I", "99,5", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "THROUGHPUT,CONFIDENCE_ITERATION,CONFIDENCE_LEVEL,THROUGHPUT_CONFID,LOCAL_CPU_CONFID"]), LIMIT_MS);
      expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
      const kv = keyvals(r.out);
      expect(kv.CONFIDENCE_ITERATION).toBe("3");
      expect(kv.CONFIDENCE_LEVEL).toBe("99");
      // Unmeasured CPU never widens: 0 exactly; the throughput's width is whatever three rounds gave.
      expect(kv.LOCAL_CPU_CONFID).toBe("0.000");
      expect(n(kv, "THROUGHPUT_CONFID")).toBeGreaterThanOrEqual(0);
      expect(n(kv, "THROUGHPUT")).toBeGreaterThan(0);
    },
    LIMIT_MS + 5000,
  );

  test(
    "-D -0.5: interim results while the test runs, in netperf's keyval form (as flent reads them)",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "2", "-D", "-0.5", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "THROUGHPUT,ELAPSED_TIME"]), LIMIT_MS);
      expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
      const kv = keyvals(r.out);
      const count = Object.keys(kv).filter((k) => k.startsWith("NETPERF_INTERIM_RESULT[")).length;
      expect(count).toBeGreaterThanOrEqual(3);
      expect(count).toBeLessThanOrEqual(5);
      let seconds = 0;
      let transactions = 0;
      for (let i = 0; i < count; i++) {
        expect(kv[`NETPERF_UNITS[${i}]`]).toBe("Trans/s");
        expect(kv[`NETPERF_ENDING[${i}]`]).toMatch(/^\d{10}\.\d{3}$/);
        seconds += n(kv, `NETPERF_INTERVAL[${i}]`);
        transactions += n(kv, `NETPERF_INTERIM_RESULT[${i}]`) * n(kv, `NETPERF_INTERVAL[${i}]`);
      }
      // The intervals tile the test, and their transactions add up to the final rate's (both rounded to print).
      expect(Math.abs(seconds - n(kv, "ELAPSED_TIME"))).toBeLessThan(0.1);
      expect(Math.abs(transactions / seconds - n(kv, "THROUGHPUT")) / n(kv, "THROUGHPUT")).toBeLessThan(0.1);
    },
    LIMIT_MS + 5000,
  );

  test(
    "the banner comes at once, the results when the test is over, as netperf prints them",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "2", "-t", "TCP_RR", "--", "-P", dataPorts()]), LIMIT_MS);
      expect(r.code).toBe(0);
      expect(r.endMs - r.firstOutMs!).toBeGreaterThan(1500);
    },
    LIMIT_MS + 5000,
  );

  test(
    "Ctrl+C ends a long test early and reports it, exit status 0, as netperf does",
    async () => {
      const p = oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "30", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "ELAPSED_TIME,TRANSACTION_RATE"]);
      // Once the banner-less run has started its data phase; a 30 s test must not run to its end.
      await new Promise((r) => setTimeout(r, 2000));
      p.interrupt();
      const r = await finish(p, LIMIT_MS);
      expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
      const kv = keyvals(r.out);
      expect(n(kv, "ELAPSED_TIME")).toBeLessThan(5);
      expect(n(kv, "TRANSACTION_RATE")).toBeGreaterThan(0);
    },
    LIMIT_MS + 5000,
  );

  test("no netserver there: netperf's two lines and its exit status 255", async () => {
    const args = ["-H", "127.0.0.1", "-p", String(NOBODY), "-l", "1"];
    const [ours, stock] = await Promise.all([finish(oursNetperf(args), LIMIT_MS), finish(stockNetperf(args), LIMIT_MS)]);
    expect(stock.code).toBe(255);
    expect({ code: ours.code, out: ours.out, err: ours.err }).toEqual({ code: stock.code, out: stock.out, err: stock.err });
  });

  test(
    "-C: stock netserver's CPU figures come through",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "2", "-C", "-P", "0", "-t", "TCP_STREAM", "--", "-P", dataPorts(), "-k", "REMOTE_CPU_UTIL,REMOTE_CPU_METHOD"]), LIMIT_MS);
      expect(r.code).toBe(0);
      const kv = keyvals(r.out);
      expect(kv.REMOTE_CPU_METHOD).toBe("S");
      expect(n(kv, "REMOTE_CPU_UTIL")).toBeGreaterThan(0);
    },
    LIMIT_MS + 5000,
  );
});

describe("--instances", () => {
  test(
    "done criterion: 16 TCP_RR instances against anyperf netserver, each printed, then their sum",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "2", "-P", "0", "-t", "TCP_RR", "--instances", "16", "--", "-r", "1,1"]), LIMIT_MS);
      expect(r.code).toBe(0);
      const rates = [...r.out.matchAll(/^16384  131072 1        1       \d\.\d\d +(\d+\.\d\d)   $/gm)].map((m) => Number(m[1]));
      expect(rates.length).toBe(16);
      const agg = /Aggregate of 16 instances of TCP_RR to 127\.0\.0\.1 \(16 completed, 0 failed\): (\d+\.\d\d) Trans\/s/.exec(r.out);
      expect(agg).not.toBeNull();
      const sum = rates.reduce((a, b) => a + b, 0);
      // Each printed rate is rounded to 0.01.
      expect(Math.abs(Number(agg![1]) - sum)).toBeLessThan(0.01 * 16);
    },
    LIMIT_MS + 5000,
  );
});

describe("--instances: the aggregate over the window all instances share", () => {
  test(
    "8 TCP_RR instances against stock netserver: the common window's rate beside the sum, its transactions within theirs",
    async () => {
      const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "2", "-P", "0", "-t", "TCP_RR", "--instances", "8", "--", "-r", "1,1"]), LIMIT_MS);
      expect(r.code).toBe(0);
      const runs = [...r.out.matchAll(/^\d+ +\d+ +1 +1 +(\d+\.\d\d) +(\d+\.\d\d) +$/gm)].map((m) => ({ elapsed: Number(m[1]), rate: Number(m[2]) }));
      expect(runs.length).toBe(8);
      const sum = Number(/\(8 completed, 0 failed\): (\d+\.\d\d) Trans\/s\n/.exec(r.out)?.[1]);
      const common = /\nOver the (\d+\.\d\d) s in which all 8 instances ran: (\d+\.\d\d) Trans\/s; the sum above adds each instance's rate over its own window\n/.exec(r.out);
      expect(common).not.toBeNull();
      const [seconds, rate] = [Number(common![1]), Number(common![2])];
      expect(seconds).toBeGreaterThan(0.5);
      expect(seconds).toBeLessThanOrEqual(Math.min(...runs.map((x) => x.elapsed)) + 0.01);
      expect(rate).toBeGreaterThan(0);
      // The window's transactions are some of those every instance counted over its own run.
      const total = runs.reduce((a, x) => a + x.rate * x.elapsed, 0);
      expect(rate * seconds).toBeLessThanOrEqual(total * 1.01);
      expect(rate).toBeLessThan(sum * 1.5);
    },
    LIMIT_MS + 5000,
  );
});

describe("anyperf netserver without -D", () => {
  test(
    "detaches as netserver does: the start line, exit 0, and the server keeps serving",
    async () => {
      const r = await finish(oursNetserver(["-p", String(DETACHED)]), LIMIT_MS);
      const pid = listenerPid(DETACHED);
      try {
        expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 0, out: `Starting netserver with host 'IN(6)ADDR_ANY' port '${DETACHED}' and family AF_UNSPEC\n`, err: "" });
        expect(pid).toBeNumber();
        const t = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(DETACHED), "-l", "1", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "TRANSACTION_RATE"]), LIMIT_MS);
        expect(t.code).toBe(0);
        expect(n(keyvals(t.out), "TRANSACTION_RATE")).toBeGreaterThan(0);
      } finally {
        if (pid) process.kill(pid);
      }
    },
    LIMIT_MS + 5000,
  );

  test("a port already taken: the reason on stderr and a failed exit, not a silent success", async () => {
    const r = await finish(oursNetserver(["-p", String(OURS)]), LIMIT_MS);
    // Were it to start after all, it must not outlive the test.
    const stray = listenerPid(OURS);
    if (stray !== undefined && stray !== ourServer.pid) process.kill(stray);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toBe(`anyperf: port ${OURS} in use on any address: pass another port (-p) or stop the other server\n`);
  });
});

describe("anyperf netserver under bad requests", () => {
  const frame = (type: number, tweak?: (dv: DataView) => void) => {
    const b = encodeOmniRequest(buildOmniRequest({ test: "TCP_RR", testLength: 1, localSendBuf: 16384, localRecvBuf: 131072 }).request);
    const dv = new DataView(b.buffer);
    dv.setUint32(0, type);
    tweak?.(dv);
    return b;
  };

  test("unknown type: errno 998 and the connection stays open", async () => {
    const r = await rawExchange(OURS, frame(1234), 500);
    expect(r.reply.length).toBe(656);
    expect(r.reply.readInt32BE(4)).toBe(998);
    expect(r.closed).toBe(false);
  });

  test("oversized request size: errno EINVAL, no data socket", async () => {
    const r = await rawExchange(OURS, frame(97, (dv) => dv.setInt32(28, 1 << 30)), 2000);
    expect(r.reply.length).toBe(656);
    expect(r.reply.readInt32BE(4)).toBe(22);
  });

  test("a data port already in use: stock netperf reports the server's errno 98 as netperf does", async () => {
    // Our own control port is surely taken.
    const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "1", "-t", "TCP_RR", "--", "-P", `,${OURS}`]), LIMIT_MS);
    expect(r.code).toBe(255);
    expect(r.out).toEndWith("\nnetperf: remote error 98");
    expect(r.err).toBe("Address already in use\n");
  }, LIMIT_MS + 5000);

  test("short, garbage and closed-early requests never wedge the server", async () => {
    const garbage = new Uint8Array(10_000).map((_, i) => (i * 7919) & 0xff);
    await Promise.all([rawExchange(OURS, new Uint8Array(100), 200), rawExchange(OURS, garbage, 500), rawExchange(OURS, frame(97, (dv) => dv.setUint32(92, 9)), 500)]);
    const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "1", "-P", "0", "-t", "TCP_RR", "--", "-P", dataPorts(), "-k", "TRANSACTION_RATE"]), LIMIT_MS);
    expect(r.code).toBe(0);
    expect(n(keyvals(r.out), "TRANSACTION_RATE")).toBeGreaterThan(0);
  }, LIMIT_MS + 5000);
});
