/**
 * Two network namespaces joined by a veth pair, for tests that need two hosts: each end has its own interface,
 * address and /proc/net, and `tc qdisc ... tbf` on each veth shapes the path like a real link of that rate.
 * Every name starts with apdiag- and every address lies inside the two namespaces; teardown kills what ran in them
 * (by pid) and deletes both, also when a test fails or the process exits early.
 */
import { spawnSync } from "node:child_process";
import { spawnProc, sleep, type Proc } from "./processes.ts";

export const NETNS_PREFIX = "apdiag-";

export interface End {
  ns: string;
  dev: string;
  addr: string;
}

export interface NetnsPair {
  a: End;
  b: End;
  /** `cmd` inside an end's namespace, bounded in time; killed at teardown if still running. */
  run(end: End, cmd: string[], limitMs?: number): Proc;
  /** A command's output inside an end's namespace, synchronously. */
  runSync(end: End, cmd: string[]): { code: number | null; stdout: string; stderr: string };
  /** Waits until something in the end's namespace listens on TCP `port`; a failure quotes `server`'s output. */
  waitListening(end: End, port: number, server?: Proc, ms?: number): Promise<void>;
  teardown(): void;
}

function sh(cmd: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: "latin1", timeout: 10_000 });
  return { code: r.error ? -1 : r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? (r.error ? String(r.error) : "") };
}

function must(cmd: string[]): string {
  const r = sh(cmd);
  if (r.code !== 0) throw new Error(`${cmd.join(" ")} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** Why namespace tests cannot run here, or undefined when they can (root, `ip netns` and `tc` present and working). */
export function netnsSkipReason(): string | undefined {
  if (process.platform !== "linux") return "network namespaces need Linux";
  if (process.getuid?.() !== 0) return "network namespaces need root";
  for (const tool of [["ip", "-V"], ["tc", "-V"]]) {
    if (sh(tool).code !== 0) return `${tool[0]} (iproute2) is not installed`;
  }
  const probe = `${NETNS_PREFIX}probe-${process.pid}`;
  const made = sh(["ip", "netns", "add", probe]);
  sh(["ip", "netns", "del", probe]);
  return made.code === 0 ? undefined : `ip netns add fails here: ${made.stderr.trim()}`;
}

export interface PairOptions {
  /** Distinguishes namespaces of one process; names are apdiag-<pid>-<tag>-a/-b. */
  tag: string;
  /** tc tbf rate on both veth ends, e.g. "1gbit"; none when absent. */
  rate?: string;
  /** tbf's latency: how long a packet may wait in its queue, which bounds the queue (default 5ms). */
  latency?: string;
  /** tbf's bucket (default 256kb); its queue holds latency's worth of the rate plus this. */
  burst?: string;
}

/** TCP LISTEN (state 0A) on `port` in /proc/net/tcp{,6} text. */
function listens(text: string, port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return new RegExp(`:${hex} [0-9A-F]+:[0-9A-F]{4} 0A `).test(text);
}

/** Makes the pair: a at 10.231.0.1/30, b at 10.231.0.2/30, lo up in both; undone in full if any step fails. */
export function makePair(options: PairOptions): NetnsPair {
  const base = `${NETNS_PREFIX}${process.pid}-${options.tag}`;
  const a: End = { ns: `${base}-a`, dev: "veth-a", addr: "10.231.0.1" };
  const b: End = { ns: `${base}-b`, dev: "veth-b", addr: "10.231.0.2" };
  const procs: Proc[] = [];
  const teardown = teardownOf([a.ns, b.ns], procs);
  try {
    for (const end of [a, b]) {
      sh(["ip", "netns", "del", end.ns]);
      must(["ip", "netns", "add", end.ns]);
    }
    must(["ip", "link", "add", a.dev, "netns", a.ns, "type", "veth", "peer", "name", b.dev, "netns", b.ns]);
    for (const end of [a, b]) {
      must(["ip", "-n", end.ns, "addr", "add", `${end.addr}/30`, "dev", end.dev]);
      must(["ip", "-n", end.ns, "link", "set", end.dev, "up"]);
      must(["ip", "-n", end.ns, "link", "set", "lo", "up"]);
      if (options.rate) {
        // tbf's clock is high-resolution, so a small burst holds the rate; a large one lets the first bytes of
        // each test through unshaped (1.25 MB is 0.2 % of a 5 s test at 1 Gbit/s). latency bounds the queue.
        must(["tc", "-n", end.ns, "qdisc", "add", "dev", end.dev, "root", "tbf", "rate", options.rate, "burst", options.burst ?? "256kb", "latency", options.latency ?? "5ms"]);
      }
    }
  } catch (err) {
    teardown();
    throw err;
  }
  const pair: NetnsPair = {
    a,
    b,
    ...endTools(procs),
    teardown,
  };
  return pair;
}

/** Kills what runs in `namespaces` (ours: tests run nothing else there) and deletes them; also at process exit. */
function teardownOf(namespaces: readonly string[], procs: Proc[]): () => void {
  let down = false;
  const teardown = () => {
    if (down) return;
    down = true;
    process.off("exit", teardown);
    for (const p of procs) p.kill();
    // A namespace lives on while a process holds it: what still runs in it (only ours) goes first.
    for (const ns of namespaces) {
      for (const pid of sh(["ip", "netns", "pids", ns]).stdout.split(/\s+/).filter(Boolean)) sh(["kill", "-9", pid]);
      sh(["ip", "netns", "del", ns]);
    }
  };
  process.on("exit", teardown);
  return teardown;
}

/** Running in an end's namespace: bounded in time, and each process kept for teardown. */
function endTools(procs: Proc[]): Pick<NetnsPair, "run" | "runSync" | "waitListening"> {
  return {
    run(end, cmd, limitMs = 60_000) {
      const p = spawnProc(["ip", "netns", "exec", end.ns, ...cmd], limitMs);
      procs.push(p);
      return p;
    },
    runSync: (end, cmd) => sh(["ip", "netns", "exec", end.ns, ...cmd]),
    async waitListening(end, port, server, ms = 10_000) {
      const stop = Date.now() + ms;
      while (!listens(sh(["ip", "netns", "exec", end.ns, "cat", "/proc/net/tcp", "/proc/net/tcp6"]).stdout, port)) {
        if (Date.now() > stop) {
          const said = server ? `; the server printed:\n${server.stdout()}${server.stderr()}` : "";
          throw new Error(`nothing listens on tcp port ${port} in ${end.ns} after ${ms} ms${said}`);
        }
        await sleep(50);
      }
    },
  };
}

export interface NetnsBridge extends Pick<NetnsPair, "run" | "runSync" | "waitListening" | "teardown"> {
  /** The host under test and its helpers, each its own namespace on one bridge. */
  tested: End;
  helpers: End[];
}

/**
 * One tested host and `helpers` helper hosts, each a namespace with one veth into a bridge that lives in a namespace
 * of its own: the tested host at 10.232.0.1/24, helper i at 10.232.0.(i + 2). Undone in full if any step fails.
 */
export function makeBridge(options: { tag: string; helpers: number }): NetnsBridge {
  const base = `${NETNS_PREFIX}${process.pid}-${options.tag}`;
  const hub = `${base}-br`;
  const ends: End[] = Array.from({ length: options.helpers + 1 }, (_, i) => ({ ns: `${base}-${i}`, dev: "eth0", addr: `10.232.0.${i + 1}` }));
  const procs: Proc[] = [];
  const teardown = teardownOf([...ends.map((e) => e.ns), hub], procs);
  try {
    for (const ns of [hub, ...ends.map((e) => e.ns)]) {
      sh(["ip", "netns", "del", ns]);
      must(["ip", "netns", "add", ns]);
    }
    must(["ip", "-n", hub, "link", "add", "br0", "type", "bridge"]);
    must(["ip", "-n", hub, "link", "set", "br0", "up"]);
    ends.forEach((end, i) => {
      must(["ip", "-n", hub, "link", "add", `p${i}`, "type", "veth", "peer", "name", end.dev, "netns", end.ns]);
      must(["ip", "-n", hub, "link", "set", `p${i}`, "master", "br0", "up"]);
      must(["ip", "-n", end.ns, "addr", "add", `${end.addr}/24`, "dev", end.dev]);
      must(["ip", "-n", end.ns, "link", "set", end.dev, "up"]);
      must(["ip", "-n", end.ns, "link", "set", "lo", "up"]);
    });
  } catch (err) {
    teardown();
    throw err;
  }
  return { tested: ends[0]!, helpers: ends.slice(1), ...endTools(procs), teardown };
}

/** Namespaces named apdiag-* that exist now (a test checks it left none of its own). */
export function listNamespaces(): string[] {
  return sh(["ip", "netns", "list"]).stdout.split("\n").map((l) => l.split(" ")[0]!).filter((n) => n.startsWith(NETNS_PREFIX));
}
