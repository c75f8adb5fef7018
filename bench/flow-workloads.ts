import { readFileSync } from "node:fs";
import { neperRr, netperfInterims, netperfNumbers, sockperfMessageRate, sockperfPingPong } from "./peer-output.ts";
import { Child, failure, waitListening } from "./processes.ts";
import { median } from "./stats.ts";
import { type Ctx, type Sample, type SideSpec, type Workload, HOST, both, clientServer, deadline, figure, loopback, loopbackHow, nativeServe, need } from "./workloads.ts";
import { Results } from "../src/report/result.ts";
import { fdsNeeded } from "../src/host/fd-limit.ts";
import { concurrentSum, countInWindow, transactionsPerSecond } from "../src/formulas.ts";

/**
 * Issue 20's rows: many concurrent request/response flows (against neper and against as many netperf processes),
 * ping-pong latency and UDP packet rate against sockperf, and 10,000 flows between a client and a server process.
 */

/** Concurrent TCP_RR flows of the many-flows rows, on this many threads (neper -T; anyperf --workers). */
const FLOWS = 1000;
const THREADS = 2;
/** The scale rows: flows between one anyperf client and one anyperf serve. */
const SCALE_FLOWS = 10_000;
/** Opening thousands of streams (listen, connect, accept, one message each way per stream) took 12-20 s at 6,000 under load. */
const SCALE_SET_UP_MS = 60_000;
const PINGPONG_BYTES = 64;
/** Starting 1,000 clients and their control connections takes longer than one test's slack (25 s seen under load). */
const SET_UP_MS = 45_000;
/**
 * The many-instance row runs each instance this much longer than T, and measures only the window in which all of them
 * ran (a common window: see `starting`). At 20, the stock side failed 5 of 5 runs of the full run of 7 December 21:20
 * UTC: its starts spread over 24.8-29.9 s.
 */
const START_SPREAD_S = 40;

const rrExtra = (p99: number | undefined): Record<string, number> => (p99 === undefined ? {} : { p99_us: p99 });

/** `anyperf loopback --rr` with its aggregate transactions/s and p99. */
function loopbackRr(ctx: Ctx, args: string[], how: string): SideSpec {
  return {
    label: "anyperf",
    how: loopbackHow(args.join(" "), how),
    run: async () => {
      const { results, f } = await loopback(ctx, args);
      return { value: figure(results.summary.transactions_per_second, "summary.transactions_per_second"), cpuSeconds: f.cpuSeconds, extra: rrExtra(results.summary.latency_us?.p99) };
    },
  };
}

/**
 * N netperf TCP_RR clients at once against one server: `value` is the transactions/s over the one window in which
 * all N ran (the caller's), beside `sum_trans_s`, the summed THROUGHPUT (each instance's rate over its own window,
 * which counts an instance's time alone at its alone rate), and the median of the instances' P99_LATENCY.
 */
function instancesSample(ctx: Ctx, texts: string[], n: number, common: { rate: number; seconds: number }): Sample & { cpuSeconds: 0 } {
  const rates = texts.flatMap((t) => netperfNumbers(t, "THROUGHPUT"));
  if (rates.length < n) throw new Error(`${n - rates.length} of ${n} netperf instances printed no THROUGHPUT`);
  const p99 = median(texts.flatMap((t) => netperfNumbers(t, "P99_LATENCY")));
  return { value: common.rate, cpuSeconds: 0, runSeconds: Number(instancesLength(ctx)), extra: { ...rrExtra(p99), sum_trans_s: concurrentSum(rates), common_s: common.seconds } };
}

/** The stock processes' rate over the window in which all of them ran: from the last first interval's start to the first last interval's end. */
function commonRate(texts: string[]): { rate: number; seconds: number } {
  const runs = texts.map(netperfInterims);
  if (runs.some((r) => r.length === 0)) throw new Error("a netperf process printed no interim (-D) figures");
  const starts = runs.map((r) => r[0]!.endS - r[0]!.seconds);
  const fromS = Math.max(...starts);
  const toS = Math.min(...runs.map((r) => r[r.length - 1]!.endS));
  if (toS <= fromS) {
    const spread = fromS - Math.min(...starts);
    throw new Error(`the ${texts.length} netperf processes never all ran at once: their starts spread over ${spread.toFixed(1)} s, as long as each ran (-l T+${START_SPREAD_S}): raise START_SPREAD_S`);
  }
  const transactions = concurrentSum(runs.map((r) => countInWindow(r, fromS, toS)));
  return { rate: transactionsPerSecond(transactions, toS - fromS), seconds: toS - fromS };
}

/** anyperf netperf --instances: its line over the window in which all instances ran. */
function instancesCommonRate(text: string): { rate: number; seconds: number } {
  const m = /^Over the ([\d.]+) s in which all \d+ instances ran: ([\d.]+) Trans\/s/m.exec(text);
  if (!m) throw new Error(`anyperf netperf --instances printed no common window: ${/^No window.*$/m.exec(text)?.[0] ?? "no aggregate line"}`);
  return { rate: Number(m[2]), seconds: Number(m[1]) };
}

const RR_KEYS = ["-r", "1,1", "-k", "THROUGHPUT,P99_LATENCY"];
const instancesLength = (ctx: Ctx) => String(ctx.seconds + START_SPREAD_S);

/**
 * 1,000 stock netperf processes start one at a time through two threads: the spawner here and netserver's accept-and-
 * fork loop, each waiting its turn on 2 cores beside every test already running. Their starts spread over 40-85 s
 * (47 and 49 s in the full run of 7 December, 84.7 s in one after it; 57 s with every test niced), past any common
 * window. Those two threads run SCHED_FIFO while the clients start, their children reset to the normal policy on
 * fork, so no test runs above another: 8 s in a shell loop. Where chrt is missing or refused (not root), they start
 * as they can, and a spread past START_SPREAD_S fails the row with its figure.
 */
function starting(chrt: string | undefined) {
  const set = (args: string[]) => chrt !== undefined && Bun.spawnSync([chrt, ...args], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  const spawner = String(process.pid);
  return {
    server: (argv: string[]) => (chrt !== undefined && set(["--reset-on-fork", "--fifo", "1", "true"]) ? [chrt, "--reset-on-fork", "--fifo", "1", ...argv] : argv),
    spawning: () => set(["--reset-on-fork", "--fifo", "-p", "1", spawner]),
    spawned: () => void set(["--other", "-p", "0", spawner]),
  };
}

async function stockNetperfProcesses(ctx: Ctx, n: number): Promise<Sample> {
  const { netperf, netserver } = ctx.peers;
  const port = ctx.ports.take();
  const start = starting(ctx.peers.chrt);
  const server = new Child(start.server([netserver!, "-D", "-p", String(port)]), deadline(ctx) + START_SPREAD_S * 1000 + SET_UP_MS + 5_000);
  try {
    await waitListening(port, server);
    const raised = start.spawning();
    let clients: Child[];
    try {
      clients = Array.from({ length: n }, () => new Child([netperf!, "-H", HOST, "-p", String(port), "-l", instancesLength(ctx), "-D", "1", "-t", "TCP_RR", "-P", "0", "--", ...RR_KEYS], deadline(ctx) + START_SPREAD_S * 1000 + SET_UP_MS));
    } finally {
      if (raised) start.spawned();
    }
    const done = await Promise.all(clients.map((c) => c.done));
    const bad = done.map(failure).find((e) => e !== undefined);
    if (bad) throw new Error(bad);
    const s = await server.stop();
    const texts = done.map((d) => d.stdout);
    const sum = instancesSample(ctx, texts, n, commonRate(texts));
    return { ...sum, cpuSeconds: s.cpuSeconds + done.reduce((a, d) => a + d.cpuSeconds, 0) };
  } finally {
    if (server.running) await server.stop();
  }
}

async function anyperfNetperfInstances(ctx: Ctx, n: number): Promise<Sample> {
  const pair = await clientServer(ctx, {
    // Without -f, as the stock side: with it netserver serves one test at a time and the instances queue.
    server: (p) => [ctx.anyperf, "netserver", "-D", "-p", String(p)],
    client: (p) => [ctx.anyperf, "netperf", "--instances", String(n), "-H", HOST, "-p", String(p), "-l", instancesLength(ctx), "-t", "TCP_RR", "-P", "0", "--", ...RR_KEYS],
    serverEnds: false,
    setUpMs: START_SPREAD_S * 1000 + SET_UP_MS,
  });
  return { ...instancesSample(ctx, [pair.client.stdout], n, instancesCommonRate(pair.client.stdout)), cpuSeconds: both(pair) };
}

export function flowWorkloads(ctx: Ctx): Workload[] {
  const T = String(ctx.seconds);
  const { netperf, netserver, neper, sockperf } = ctx.peers;
  const noNetperf = need(netperf, "netperf") ?? need(netserver, "netserver", "netperf");
  const noSockperf = need(sockperf, "sockperf");
  const flows = String(FLOWS);
  const list: Workload[] = [];

  list.push({
    id: "rr-flows-neper",
    workload: `TCP_RR 1,1, ${FLOWS} flows, ${THREADS} threads (neper)`,
    unit: "trans/s",
    target: { kind: "ratio-at-least", value: 1.0 },
    cpuScope: "client+server",
    statistic: "median",
    reference: {
      label: "neper",
      how: `tcp_rr -c -H 127.0.0.1 -F ${FLOWS} -T ${THREADS} -l T -p 50,99 against tcp_rr -F ${FLOWS} -T ${THREADS} -l T; the client's throughput=, latency_p99=`,
      missing: neper ? undefined : "neper not found (build google/neper and set NEPER=/path/to/tcp_rr or put tcp_rr on PATH)",
      run: async () => {
        const common = ["-F", flows, "-T", String(THREADS), "-l", T, "--nolog"];
        const pair = await clientServer(ctx, {
          ports: 2,
          server: (p) => [neper!, ...common, "-C", String(p), "-P", String(p + 1)],
          client: (p) => [neper!, "-c", "-H", HOST, ...common, "-C", String(p), "-P", String(p + 1), "-p", "50,99"],
          serverEnds: true,
        });
        const r = neperRr(pair.client.stdout);
        return { value: r.transactionsPerSecond, cpuSeconds: both(pair), extra: { p99_us: r.p99Us } };
      },
    },
    anyperf: loopbackRr(ctx, ["--rr", "1,1", "-P", flows, "--workers", String(THREADS)], "summary.transactions_per_second, latency_us.p99"),
  });

  list.push({
    id: "rr-flows-netperf",
    workload: `TCP_RR 1,1, ${FLOWS} netperf instances at once`,
    unit: "trans/s",
    target: { kind: "ratio-at-least", value: 1.0 },
    cpuScope: "all netperf processes + netserver",
    statistic: "median",
    reference: {
      label: `${FLOWS}× netperf`,
      how: `${FLOWS} processes of netperf -t TCP_RR -l T+${START_SPREAD_S} -D 1 -- -r 1,1 -k THROUGHPUT,P99_LATENCY against one netserver -D (it and the spawner SCHED_FIFO while the processes start, where chrt may); trans/s over the window in which all ran (their interim -D figures inside it), sum of THROUGHPUT beside it, median P99_LATENCY`,
      missing: noNetperf,
      run: () => stockNetperfProcesses(ctx, FLOWS),
    },
    anyperf: {
      label: "anyperf netperf",
      how: `anyperf netperf --instances ${FLOWS} -t TCP_RR -l T+${START_SPREAD_S} -- -r 1,1 -k THROUGHPUT,P99_LATENCY against anyperf netserver -D; its trans/s over the window in which all ran, sum of THROUGHPUT beside it, median P99_LATENCY`,
      run: () => anyperfNetperfInstances(ctx, FLOWS),
    },
  });

  const size = String(PINGPONG_BYTES);
  list.push({
    id: "pingpong-sockperf",
    workload: `TCP ping-pong ${PINGPONG_BYTES} B, 1 flow (sockperf)`,
    unit: "trans/s",
    target: { kind: "ratio-at-least", value: 1.0 },
    cpuScope: "client+server",
    statistic: "median",
    reference: {
      label: "sockperf",
      how: `sockperf ping-pong --tcp -m ${size} -t T --full-rtt against sockperf server --tcp; ReceivedMessages / RunTime of [Valid Duration], percentile 99.000`,
      missing: noSockperf,
      run: async () => {
        const pair = await clientServer(ctx, {
          server: (p) => [sockperf!, "server", "--tcp", "-i", HOST, "-p", String(p)],
          client: (p) => [sockperf!, "ping-pong", "--tcp", "-i", HOST, "-p", String(p), "-m", size, "-t", T, "--full-rtt"],
          serverEnds: false,
        });
        const r = sockperfPingPong(pair.client.stdout);
        return { value: r.transactionsPerSecond, cpuSeconds: both(pair), extra: { p99_us: r.p99Us } };
      },
    },
    anyperf: loopbackRr(ctx, ["--rr", `${size},${size}`, "-P", "1"], "summary.transactions_per_second, latency_us.p99"),
  });

  list.push({
    id: "udp-64-sockperf",
    workload: `UDP ${PINGPONG_BYTES} B datagrams, sender packets/s (sockperf)`,
    unit: "packets/s",
    target: { kind: "ratio-at-least", value: 1.0 },
    cpuScope: "client+server",
    statistic: "median",
    reference: {
      label: "sockperf",
      how: `sockperf throughput -m ${size} -t T against sockperf server (UDP); Summary: Message Rate (the sender's: its server counts nothing it prints)`,
      missing: noSockperf,
      run: async () => {
        // sockperf's UDP server has no TCP port for waitListening to see: it gets a moment to bind instead.
        const port = ctx.ports.take();
        const server = new Child([sockperf!, "server", "-i", HOST, "-p", String(port)], deadline(ctx) + 5_000);
        try {
          await Bun.sleep(300);
          if (!server.running) throw new Error(failure(await server.done) ?? "sockperf server exited");
          const client = await new Child([sockperf!, "throughput", "-i", HOST, "-p", String(port), "-m", size, "-t", T], deadline(ctx)).done;
          const err = failure(client);
          if (err) throw new Error(err);
          const s = await server.stop();
          return { value: sockperfMessageRate(client.stdout), cpuSeconds: client.cpuSeconds + s.cpuSeconds };
        } finally {
          if (server.running) await server.stop();
        }
      },
    },
    anyperf: {
      label: "anyperf",
      how: loopbackHow(`-P 1 --udp -l ${size} -b 0`, "sender.packets_per_second (as sockperf's); receiver's in extra"),
      run: async () => {
        const { results, f } = await loopback(ctx, ["-P", "1", "--udp", "-l", size, "-b", "0"]);
        const extra: Record<string, number> = { received_pps: results.receiver?.packets_per_second ?? 0, loss_percent: results.summary.loss_percent ?? 0 };
        return { value: figure(results.sender?.packets_per_second, "sender.packets_per_second"), cpuSeconds: f.cpuSeconds, extra };
      },
    },
  });

  const scale = scaleFlows();
  for (const rr of [true, false]) {
    // Bulk in 16 KiB writes: 10,000 flows share 1-2 Gbit/s here, so a flow makes only a few 128 KiB writes in a window,
    // too coarse a step for the slowest/fastest ratio (0 where a flow's one write fell outside it).
    const args = [...(rr ? ["--rr", "1,1"] : ["-l", "16K"]), "-P", String(scale.flows)];
    list.push({
      id: rr ? "scale-rr" : "scale-bulk",
      workload: `${rr ? "TCP_RR 1,1" : "TCP bulk"}, ${scale.flows} flows, client and server processes${scale.note}`,
      unit: rr ? "trans/s" : "bit/s",
      target: { kind: "figure-shown" },
      cpuScope: "client+server",
      statistic: "median",
      anyperf: {
        label: "anyperf client → serve",
        how: `anyperf client 127.0.0.1 -p PORT -t T ${args.join(" ")} --json against anyperf serve -p PORT (dialects off); summary.${rr ? "transactions_per_second" : "throughput_bps"}, flows and remote.flows: memory_per_flow_bytes, slowest_to_fastest`,
        run: async () => {
          const pair = await clientServer(ctx, {
            server: (p) => nativeServe(ctx, p),
            client: (p) => [ctx.anyperf, "client", HOST, "-p", String(p), "-t", String(ctx.seconds), ...args, "--json"],
            serverEnds: false,
            setUpMs: SCALE_SET_UP_MS,
          });
          const results = Results.parse(JSON.parse(pair.client.stdout));
          if (results.errors.length > 0) throw new Error(`anyperf client: ${results.errors.slice(0, 3).join("; ")}`);
          const value = rr ? figure(results.summary.transactions_per_second, "summary.transactions_per_second") : results.summary.throughput_bps;
          const [client, server] = [results.flows, results.remote?.flows];
          if (!client || !server) throw new Error("anyperf client --json has no flows or remote.flows");
          const extra = { client_memory_per_flow_bytes: client.memory_per_flow_bytes, server_memory_per_flow_bytes: server.memory_per_flow_bytes, slowest_to_fastest: client.slowest_to_fastest };
          return { value, cpuSeconds: both(pair), extra };
        },
      },
    });
  }

  return list;
}

/**
 * Flows the scale rows run: 10,000, or as many as one end's process may hold under this hard open-file limit (each
 * end is its own process holding one descriptor per flow), with the reason in the row's name.
 */
function scaleFlows(): { flows: number; note: string } {
  const hard = /^Max open files\s+\d+\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
  const perEnd = (n: number) => fdsNeeded(n, "rr", { sends: true, receives: false });
  if (hard === undefined || perEnd(SCALE_FLOWS) <= Number(hard)) return { flows: SCALE_FLOWS, note: "" };
  return { flows: Math.floor((Number(hard) - perEnd(0)) / 1000) * 1000, note: ` (hard ulimit -n ${hard} holds no ${SCALE_FLOWS})` };
}
