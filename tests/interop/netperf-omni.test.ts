import { describe, expect, test } from "bun:test";
import { finish, hasStockNetperf, netserverPair, oursNetperf, stockNetperf, withoutStockTimerRace } from "./netperf-harness.ts";
import { freePorts } from "../support/processes.ts";

/**
 * Issue 21 item 6: netperf's -t omni (with -d, -T, -c and the -o/-O/-k selectors), LOC_CPU, REM_CPU and
 * test-specific -D on UDP_RR, with stock netperf/netserver 2.7.0 on each side. Both clients run against the same
 * stock netserver and their outputs must have the same shape (titles, column headers, selector names); the
 * figures themselves differ from run to run. Ports 34300-34349.
 */

const available = hasStockNetperf();
// Free ports picked at run time: the range is also the kernel's ephemeral one.
const STOCK = freePorts(34300, 34350, 2);
const OURS = STOCK + 1;
const LIMIT_MS = 25_000;

netserverPair(STOCK, OURS, available);

/** The output with every number replaced, so two runs of one test compare. */
const shape = (text: string) => withoutStockTimerRace(text).replace(/-?\d+(\.\d+)?/g, "N").replace(/ +/g, " ");

async function both(args: string[], port = STOCK) {
  const argv = ["-H", "127.0.0.1", "-p", String(port), "-l", "1", ...args];
  const [stock, ours] = await Promise.all([finish(stockNetperf(argv), LIMIT_MS), finish(oursNetperf(argv), LIMIT_MS)]);
  return { stock, ours };
}

describe.skipIf(!available)("netperf -t omni against stock netserver", () => {
  const cases: [string, string[], RegExp][] = [
    ["default: send, the -O table", ["-t", "omni"], /^OMNI Send TEST from .*\nLocal +Remote +Local +Elapsed Throughput Throughput/],
    ["-d rr", ["-t", "omni", "--", "-d", "rr"], /^OMNI Send\|Recv TEST .*\n.*Request Response Elapsed/],
    ["-d rr -c", ["-t", "omni", "--", "-d", "rr", "-c"], /^OMNI Connect\|Send\|Recv TEST /],
    ["-T udp -d rr -o", ["-t", "omni", "--", "-T", "udp", "-d", "rr", "-o"], /^OMNI Send\|Recv TEST .*\nLocal Send Socket Size Final,.*Throughput Units\n/],
    ["-d recv -k", ["-t", "omni", "--", "-d", "recv", "-k"], /^OMNI Receive TEST .*\nRSS_SIZE_END=\d+\nLSR_SIZE_END=\d+\nREMOTE_SEND_SIZE=16384\n/],
    ["-d maerts -O list", ["-t", "omni", "--", "-d", "maerts", "-O", "THROUGHPUT,DIRECTION,PROTOCOL"], /\n[\d.]+ +Receive +TCP +\n$/],
    ["-T udp (send)", ["-t", "omni", "--", "-T", "udp"], /^OMNI Send TEST .*\n(.*\n){4}212992 /],
    // Issue 25: -r without -d makes omni request/response (runemomni*.sh rely on it); an explicit -d wins in either order.
    ["-r 1 without -d", ["-t", "omni", "--", "-r", "1"], /^OMNI Send\|Recv TEST .*\n(.*\n){4}\d+ +\d+ +\d+ +\d+ +1 +1 +[\d.]+ +[\d.]+ +Trans\/s/],
    ["-r 64K -b 12", ["-t", "omni", "--", "-r", "64K", "-b", "12", "-O", "THROUGHPUT_UNITS,DIRECTION,REQUEST_SIZE,RESPONSE_SIZE"], /\nTrans\/s +Send\|Recv +65536 +65536 +\n$/],
    ["-r ,4 keeps the default request", ["-t", "omni", "--", "-r", ",4", "-o", "DIRECTION,REQUEST_SIZE,RESPONSE_SIZE"], /\nSend\|Recv,1,4\n$/],
    ["-d send -r 1,1: -d wins", ["-t", "omni", "--", "-d", "send", "-r", "1,1", "-o", "THROUGHPUT_UNITS,DIRECTION,REQUEST_SIZE,RESPONSE_SIZE"], /\n10\^6bits\/s,Send,1,1\n$/],
    ["-r 1 -d recv: -d wins", ["-t", "omni", "--", "-r", "1", "-d", "recv", "-o", "THROUGHPUT_UNITS,DIRECTION"], /\n10\^6bits\/s,Receive\n$/],
  ];
  for (const [name, args, expected] of cases) {
    test(name, async () => {
      const { stock, ours } = await both(args);
      expect(stock.code).toBe(0);
      expect(ours.err).toBe("");
      expect(ours.code).toBe(0);
      expect(ours.out).toMatch(expected);
      expect(shape(ours.out)).toBe(shape(stock.out));
    });
  }

  test("an omni choice anyperf cannot run is one line naming -d", async () => {
    const r = await finish(oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-t", "omni", "--", "-T", "udp", "-d", "recv"]), LIMIT_MS);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/^anyperf: netperf: -t omni with -d recv over udp is not supported by anyperf: use .*\n$/);
  });
});

describe.skipIf(!available)("LOC_CPU and REM_CPU print what stock prints", () => {
  for (const args of [["-t", "LOC_CPU"], ["-t", "LOC_CPU", "-v", "2"], ["-t", "REM_CPU"], ["-t", "REM_CPU", "-v", "2"]]) {
    test(`${args.join(" ")} against stock netserver`, async () => {
      const { stock, ours } = await both(args);
      expect(ours.code).toBe(stock.code);
      expect(ours.out).toBe(stock.out);
      expect(ours.out).toMatch(/^100/);
    });
  }

  test("stock netperf -t REM_CPU -v 2 against anyperf netserver", async () => {
    const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-t", "REM_CPU", "-v", "2"]), LIMIT_MS);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^100\nThere (is 1 remote cpu|are \d+ remote cpus)\n$/);
  });
});

describe.skipIf(!available)("test-specific -D on UDP_RR is accepted (nodelay applies to TCP only)", () => {
  test("anyperf netperf -t UDP_RR -- -D against stock netserver", async () => {
    const { stock, ours } = await both(["-t", "UDP_RR", "--", "-D"]);
    expect(stock.code).toBe(0);
    expect(ours.err).toBe("");
    expect(ours.code).toBe(0);
    expect(ours.out).toMatch(/^MIGRATED UDP REQUEST\/RESPONSE TEST .* : nodelay : demo : first burst 0\n/);
    expect(shape(ours.out)).toBe(shape(stock.out));
  });

  test("stock netperf -t UDP_RR -- -D against anyperf netserver", async () => {
    const r = await finish(stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "1", "-t", "UDP_RR", "--", "-D", "-k", "TRANSACTION_RATE,REMOTE_NODELAY"]), LIMIT_MS);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(Number(/TRANSACTION_RATE=([\d.]+)/.exec(r.out)?.[1])).toBeGreaterThan(100);
  });
});

describe.skipIf(!available)("TCP_MSS and TCP_SENDFILE (classic DO_TCP_STREAM)", () => {
  test("anyperf netperf -t TCP_MSS prints what stock prints, against stock netserver", async () => {
    for (const extra of [[], ["-v", "0", "-P", "0", "-B", "brand"]]) {
      const { stock, ours } = await both(["-t", "TCP_MSS", ...extra]);
      expect(stock.code).toBe(0);
      expect(ours.err).toBe("");
      expect(ours.code).toBe(0);
      expect(ours.out).toBe(stock.out);
    }
  });

  test("anyperf netperf -t TCP_MSS against anyperf netserver prints stock's figure", async () => {
    const { stock, ours } = await both(["-t", "TCP_MSS", "-P", "0"], OURS);
    expect(ours.code).toBe(0);
    expect(ours.out).toBe(stock.out);
    expect(ours.out).toMatch(/^\d+ \n$/);
  });

  test("stock netperf -t TCP_SENDFILE against anyperf netserver: the classic stream test runs and reports", async () => {
    const argv = ["-H", "127.0.0.1", "-l", "1", "-t", "TCP_SENDFILE"];
    const [stock, ours] = await Promise.all([finish(stockNetperf(["-p", String(STOCK), ...argv]), LIMIT_MS), finish(stockNetperf(["-p", String(OURS), ...argv]), LIMIT_MS)]);
    expect(ours.err).toBe("");
    expect(ours.code).toBe(0);
    expect(shape(ours.out)).toBe(shape(stock.out));
    const mbps = Number(/\n\s*\d+\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s*\n$/.exec(ours.out)?.[1]);
    expect(mbps).toBeGreaterThan(100);
  });
});

describe.skipIf(!available)("a stream given -r sizes moves them per call, as stock netperf does", () => {
  const kv = (out: string) => Object.fromEntries([...out.matchAll(/^(\w+)=(-?\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
  for (const [args, size, bytes, calls, each] of [
    [["-d", "send", "-r", "100"], "LOCAL_SEND_SIZE", "LOCAL_BYTES_SENT", "LOCAL_SEND_CALLS", 100],
    [["-d", "recv", "-r", "100,200"], "LOCAL_RECV_SIZE", "LOCAL_BYTES_RECVD", "LOCAL_RECV_CALLS", 200],
  ] as const) {
    test(`-- ${args.join(" ")} against stock netserver`, async () => {
      const { stock, ours } = await both(["-P", "0", "-t", "omni", "--", ...args, "-k", `${size},${bytes},${calls}`]);
      expect(ours.code).toBe(0);
      for (const out of [stock.out, ours.out]) {
        const k = kv(out);
        expect(k[size]).toBe(0);
        // A receive call returns at most its size; the loopback hands over whole sends.
        expect(k[bytes]! / k[calls]!).toBeLessThanOrEqual(each);
        expect(k[bytes]! / k[calls]!).toBeGreaterThan(each / 2);
      }
    });
  }
});

describe.skipIf(!available)("stock netperf's stream with -r sizes against anyperf netserver, as against stock netserver", () => {
  const kv = (out: string) => Object.fromEntries([...out.matchAll(/^(\w+)=(-?\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
  const run = (port: number, args: string[], keys: string) =>
    finish(stockNetperf(["-H", "127.0.0.1", "-p", String(port), "-l", "1", "-P", "0", "-t", "omni", "--", ...args, "-k", keys]), LIMIT_MS);

  test("-d send -r 100: the netserver reports 100 as its receive size", async () => {
    for (const port of [STOCK, OURS]) {
      const r = await run(port, ["-d", "send", "-r", "100"], "REMOTE_RECV_SIZE");
      expect(r.code).toBe(0);
      expect(kv(r.out).REMOTE_RECV_SIZE).toBe(100);
    }
  });

  test("-d recv -r 100,200: the netserver sends 200 bytes per call and reports 200 as its send size", async () => {
    for (const port of [STOCK, OURS]) {
      const r = await run(port, ["-d", "recv", "-r", "100,200"], "REMOTE_SEND_SIZE,REMOTE_SEND_CALLS,REMOTE_BYTES_SENT");
      expect(r.code).toBe(0);
      const k = kv(r.out);
      expect(k.REMOTE_SEND_SIZE).toBe(200);
      expect(k.REMOTE_BYTES_SENT! / k.REMOTE_SEND_CALLS!).toBeGreaterThan(199);
      expect(k.REMOTE_BYTES_SENT! / k.REMOTE_SEND_CALLS!).toBeLessThanOrEqual(200);
    }
  });
});

describe.skipIf(!available)("the *_SIZE_END selectors are the socket sizes as the data phase ended", () => {
  const SIZES = "LSS_SIZE,LSS_SIZE_END,LSR_SIZE,LSR_SIZE_END,RSS_SIZE,RSS_SIZE_END,RSR_SIZE,RSR_SIZE_END";
  const sizes = (out: string) => Object.fromEntries([...out.matchAll(/^(\w+)=(-?\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  const run = (netperf: typeof stockNetperf, port: number, direction: string) =>
    finish(netperf(["-H", "127.0.0.1", "-p", String(port), "-l", "1", "-P", "0", "-t", "omni", "--", "-d", direction, "-k", SIZES]), LIMIT_MS);

  // Loopback's first segments already grow the send buffer to its autotuned size; a receiver's grows as data arrives.
  test("anyperf netperf against stock netserver: the local ends grew as stock's do", async () => {
    for (const direction of ["send", "recv"]) {
      const [stock, ours] = await Promise.all([run(stockNetperf, STOCK, direction), run(oursNetperf, STOCK, direction)]);
      expect(ours.code).toBe(0);
      const s = sizes(stock.out);
      const o = sizes(ours.out);
      expect(o.LSS_SIZE).toBe(s.LSS_SIZE!);
      expect(o.LSS_SIZE_END).toBe(s.LSS_SIZE_END!);
      expect(s.LSS_SIZE_END!).toBeGreaterThan(s.LSS_SIZE!);
      if (direction === "recv") {
        expect(s.LSR_SIZE_END!).toBeGreaterThan(s.LSR_SIZE!);
        expect(o.LSR_SIZE_END!).toBeGreaterThan(o.LSR_SIZE!);
      }
    }
  });

  test("stock netperf against anyperf netserver: the remote ends grew as stock netserver's do", async () => {
    for (const direction of ["send", "recv"]) {
      const stock = await run(stockNetperf, STOCK, direction);
      const ours = await run(stockNetperf, OURS, direction);
      expect(ours.code).toBe(0);
      const s = sizes(stock.out);
      const o = sizes(ours.out);
      expect(o.RSS_SIZE).toBe(s.RSS_SIZE!);
      expect(o.RSS_SIZE_END).toBe(s.RSS_SIZE_END!);
      expect(s.RSS_SIZE_END!).toBeGreaterThan(s.RSS_SIZE!);
      if (direction === "send") {
        expect(s.RSR_SIZE_END!).toBeGreaterThan(s.RSR_SIZE!);
        expect(o.RSR_SIZE_END!).toBeGreaterThan(o.RSR_SIZE!);
      }
    }
  });
});
