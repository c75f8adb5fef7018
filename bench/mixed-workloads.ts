import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { flentMbits, flentSummary, netperfKeyval, netperfNumber } from "./peer-output.ts";
import { Child, failure, waitListening } from "./processes.ts";
import { watchChildCpu } from "./child-cpu.ts";
import { type Ctx, type Sample, type SideSpec, type Workload, HOST, deadline, need } from "./workloads.ts";

/**
 * Issue 30's many-test netserver rows: stock netperf clients started together against one server, 4 × TCP_STREAM,
 * 4 × TCP_MAERTS, and mixed (2 + 2), whose figure is the server's sending half (the TCP_MAERTS tests), the one that
 * starved beside receivers; the extras carry its receiving half and the split. And flent's RRUL against the server,
 * its download sum (the server sending beside receivers and UDP_RR) and its upload sum.
 */

/** netperf tests of the mixed row, started together; TCP_MAERTS is the server sending. */
export const MIXED_TESTS = ["TCP_STREAM", "TCP_STREAM", "TCP_MAERTS", "TCP_MAERTS"] as const;

/** The server's sending and receiving halves from each test's THROUGHPUT (netperf's 10^6 bit/s), in bit/s. */
export function mixedSplit(tests: readonly string[], throughputs: readonly number[]): { sendBps: number; recvBps: number; sendToRecv: number } {
  let sendBps = 0, recvBps = 0;
  tests.forEach((t, i) => {
    if (t === "TCP_MAERTS") sendBps += throughputs[i]! * 1e6;
    else recvBps += throughputs[i]! * 1e6;
  });
  return { sendBps, recvBps, sendToRecv: recvBps > 0 ? sendBps / recvBps : 0 };
}

/**
 * The mixed tests against one netserver (forking, without -f, so the tests run at once as they do for a user), every
 * client's THROUGHPUT read; the server's CPU is its own rusage and its forked children's (child-cpu.ts).
 */
async function mixedSide(ctx: Ctx, server: "stock" | "anyperf", tests: readonly string[], half: "send" | "recv"): Promise<Sample> {
  const port = ctx.ports.take();
  const serverCmd = server === "stock" ? [ctx.peers.netserver!] : [ctx.anyperf, "netserver"];
  const srv = new Child([...serverCmd, "-D", "-p", String(port)], deadline(ctx) + 5_000);
  try {
    await waitListening(port, srv);
    const children = watchChildCpu(srv.pid);
    const clients = tests.map(
      (t) => new Child([ctx.peers.netperf!, "-H", HOST, "-p", String(port), "-l", String(ctx.seconds), "-t", t, "-P", "0", "--", "-k", "THROUGHPUT"], deadline(ctx)),
    );
    const done = await Promise.all(clients.map((c) => c.done));
    const childSeconds = children.stop();
    const bad = done.map(failure).find((e) => e !== undefined);
    if (bad) throw new Error(bad);
    const s = await srv.stop();
    const split = mixedSplit(tests, done.map((d) => netperfNumber(netperfKeyval(d.stdout), "THROUGHPUT")));
    const cpuSeconds = s.cpuSeconds + childSeconds;
    if (half === "recv") return { value: split.recvBps, cpuSeconds };
    return { value: split.sendBps, cpuSeconds, ...(split.recvBps > 0 ? { extra: { recv_bps: split.recvBps, send_to_recv: split.sendToRecv } } : {}) };
  } finally {
    if (srv.running) await srv.stop();
  }
}

/** RRUL's bandwidth loaders start this long after its pings and stop this long before them (flent's -d). */
const RRUL_DELAY_S = 1;

/**
 * flent's RRUL against one netserver: 4 TCP_STREAM (upload), 4 TCP_MAERTS (download) and 3 UDP_RR, netperf -D
 * interim figures. flent runs the netperf first on PATH: the stock one's folder goes first.
 */
async function rrulSide(ctx: Ctx, server: "stock" | "anyperf", half: "download" | "upload"): Promise<Sample> {
  const port = ctx.ports.take();
  const serverCmd = server === "stock" ? [ctx.peers.netserver!] : [ctx.anyperf, "netserver"];
  const lengthS = ctx.seconds + 2 * RRUL_DELAY_S;
  const srv = new Child([...serverCmd, "-D", "-p", String(port)], deadline(ctx) + 2 * RRUL_DELAY_S * 1000 + 20_000);
  const dir = mkdtempSync(join(tmpdir(), "anyperf-bench-flent-"));
  try {
    await waitListening(port, srv);
    const children = watchChildCpu(srv.pid);
    const path = `${dirname(ctx.peers.netperf!)}:${process.env.PATH ?? ""}`;
    const flent = new Child(["env", `PATH=${path}`, ctx.peers.flent!, "rrul", "-H", HOST, "--netperf-control-port", String(port), "-l", String(ctx.seconds), "-d", String(RRUL_DELAY_S), "-D", dir, "-f", "summary"], deadline(ctx) + 2 * RRUL_DELAY_S * 1000 + 15_000);
    const done = await flent.done;
    const childSeconds = children.stop();
    const bad = failure(done);
    if (bad) throw new Error(bad);
    const s = await srv.stop();
    const series = flentSummary(done.stdout);
    const [figure, other] = half === "download" ? ["TCP download sum", "TCP upload sum"] : ["TCP upload sum", "TCP download sum"];
    return { value: flentMbits(series, figure), cpuSeconds: s.cpuSeconds + childSeconds, runSeconds: lengthS, extra: { [half === "download" ? "upload_bps" : "download_bps"]: flentMbits(series, other) } };
  } finally {
    if (srv.running) await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function mixedWorkloads(ctx: Ctx): Workload[] {
  const { netperf, netserver } = ctx.peers;
  const missing = need(netperf, "netperf") ?? need(netserver, "netserver", "netperf");
  const row = (id: string, tests: readonly string[], half: "send" | "recv", workload: string, figure: string): Workload => {
    const side = (server: "stock" | "anyperf"): SideSpec => ({
      label: server === "stock" ? "netserver" : "anyperf netserver",
      how: `netperf ${tests.join(", ")} at once, -l T -- -k THROUGHPUT, against ${server === "stock" ? "netserver" : "anyperf netserver"} -D; ${figure}`,
      missing,
      run: () => mixedSide(ctx, server, tests, half),
    });
    return { id, workload, unit: "bit/s", target: { kind: "ratio-at-least", value: 1.0 }, cpuScope: "server only (netserver with its forked children; the clients are stock netperf on both sides)", statistic: "median", reference: side("stock"), anyperf: side("anyperf") };
  };
  const four = (t: string) => [t, t, t, t];
  const noFlent = missing ?? (ctx.peers.flent ? undefined : "flent not installed (./scripts/install-peers installs Debian's flent)");
  const rrul = (half: "download" | "upload"): Workload => {
    const side = (server: "stock" | "anyperf"): SideSpec => ({
      label: server === "stock" ? "netserver" : "anyperf netserver",
      how: `flent rrul -H 127.0.0.1 --netperf-control-port PORT -l T -d ${RRUL_DELAY_S} -f summary against ${server === "stock" ? "netserver" : "anyperf netserver"} -D; "TCP ${half} sum" (its mean over the run); CPU over T + ${2 * RRUL_DELAY_S} s`,
      missing: noFlent,
      run: () => rrulSide(ctx, server, half),
    });
    const what = half === "download" ? "the server sending, beside its receivers and 3 UDP_RR" : "the server receiving, beside its senders and 3 UDP_RR";
    return { id: `srv-flent-rrul-${half}`, workload: `flent RRUL → netserver, TCP ${half} sum (${what})`, unit: "bit/s", target: { kind: "ratio-at-least", value: 1.0 }, cpuScope: "server only (netserver with its forked children; flent and its netperf processes are the same on both sides)", statistic: "median", reference: side("stock"), anyperf: side("anyperf") };
  };
  return [
    row("srv-netperf-mixed", MIXED_TESTS, "send", "stock netperf → netserver, 2 TCP_STREAM + 2 TCP_MAERTS at once, the server's sending half", "the MAERTS THROUGHPUTs × 10^6 (the server's sending half); extra: the STREAM sum (recv_bps) and send_to_recv"),
    row("srv-netperf-stream-4", four("TCP_STREAM"), "recv", "stock netperf → netserver, 4 TCP_STREAM at once", "the THROUGHPUTs × 10^6 added (the server receiving)"),
    row("srv-netperf-maerts-4", four("TCP_MAERTS"), "send", "stock netperf → netserver, 4 TCP_MAERTS at once", "the THROUGHPUTs × 10^6 added (the server sending)"),
    rrul("download"),
    rrul("upload"),
  ];
}
