#!/usr/bin/env bun
/**
 * anyperf entry: a native subcommand, a dialect subcommand (`anyperf iperf3 ...`), or — when the binary is invoked
 * through a link named like a peer tool — that dialect, busybox style.
 */
import { basename } from "node:path";
import { VERSION } from "./src/version.ts";
import { drainStdStreams, exitCodeAfterStreams, guardStdStreams } from "./src/output-failure.ts";

type Entry = (argv: string[]) => Promise<number>;

// Lazy imports keep start-up fast: only the chosen mode's code (and its libraries) is loaded; --version and --help
// load nothing else (the status and access options pull in zod: about 10 ms of a 25 ms start, measured).
const native: Record<string, () => Promise<Entry>> = {
  loopback: async () => (await import("./src/native/loopback-cli.ts")).loopbackMain,
  client: async () => (await import("./compat/client/main.ts")).anyClientMain,
  // serve knows every dialect, so it lives beside them in compat/ (the engine in src/ knows none).
  serve: async () => (await import("./compat/serve/main.ts")).serveMain,
  history: async () => (await import("./src/procedure/history-cli.ts")).historyMain,
  compare: async () => (await import("./src/procedure/history-cli.ts")).compareMain,
  report: async () => (await import("./src/procedure/report-cli.ts")).reportMain,
  sweep: async () => (await import("./compat/sweep/main.ts")).sweepMain,
  locate: async () => (await import("./src/fleet/locate.ts")).locateMain,
};
const dialects: Record<string, () => Promise<Entry>> = {
  ntttcp: async () => (await import("./compat/ntttcp/main.ts")).main,
  iperf3: async () => (await import("./compat/iperf3/main.ts")).main,
  iperf: async () => (await import("./compat/iperf2/main.ts")).main,
  netperf: async () => (await import("./compat/netperf/main.ts")).netperfMain,
  netserver: async () => (await import("./compat/netperf/main.ts")).netserverMain,
};

const USAGE = `anyperf ${VERSION}: network throughput, packet rate and latency, paired with the tools you already run
usage: anyperf <command> [options]
  loopback        self-test: receiver and sender on 127.0.0.1
  serve           one server for every client: iperf3, iperf, netperf, ntttcp and anyperf client
  client HOST..   test against 'anyperf serve', iperf3, iperf 2, netserver or ntttcp on HOST (or many at once)
  history [FILE]  the runs recorded by --history (loopback, client)
  compare A B     two recorded runs side by side: change in %, what differed in the set-up
  report -o F     the recorded runs as one HTML file with charts (inline SVG, works offline)
  sweep K=V.. -- a dialect client (iperf3, iperf, netperf, ntttcp ARGS) per sweep point, one table
  locate SVC NODE the address of the serve on NODE among a headless Service's (fleet plans)
${Object.keys(dialects).map((d) => `  ${d.padEnd(15)} ${d}-compatible command line and wire protocol`).join("\n")}
  --version       print the version
run 'anyperf <command> --help' for the options of a command`;

/** Server roles keep the status endpoint up between tests. */
function looksLikeServer(mode: string, argv: string[]): boolean {
  if (mode === "netserver" || mode === "serve") return true;
  if (mode === "ntttcp") return argv.some((a) => /^-r/i.test(a));
  // -s alone or clustered with the argument-less flags servers take (iperf -su, iperf3 -sD1, iperf -seV).
  return argv.some((a) => a === "--server" || /^-[uVD1e]*s[uVD1e]*$/.test(a));
}

async function withStatus(mode: string, argv: string[], entry: Entry): Promise<number> {
  const [{ takeHttpOptions }, { applyServerPolicyOptions }, { setProcessLabels, takeLabelOptions }] = await Promise.all([
    import("./src/status/global-http.ts"),
    import("./src/access/server-policy.ts"),
    import("./src/fleet/labels.ts"),
  ]);
  const { rest: unlabelled, labels } = takeLabelOptions(argv, process.env);
  setProcessLabels(labels);
  const { rest: modeArgv, http, token, lingerS } = takeHttpOptions(unlabelled, process.env);
  const server = looksLikeServer(mode, modeArgv);
  // --allow and --max-* are global like --http: every server mode spells them the same (src/access).
  const rest = applyServerPolicyOptions(modeArgv, server);
  if (http === undefined) return entry(rest);
  const { startGlobalStatus, lingerMs } = await import("./src/status/global-http.ts");
  // serve is ready once every listener is bound, which happens after the endpoint is up (compat/serve/main.ts).
  if (mode === "serve") (await import("./src/status/readiness.ts")).holdReadiness();
  const status = await startGlobalStatus({ http, token, mode, role: server ? "server" : "client", persistent: server });
  try {
    const code = await entry(rest);
    // After the run the endpoint stays up for /results (--linger; Ctrl+C ends it).
    const { shutdownSignal } = await import("./src/signals.ts");
    await status.linger(lingerMs(lingerS), shutdownSignal());
    return code;
  } finally {
    await status.stop();
  }
}

/** A mode's modules, loaded once zod is told not to compile: it reads that as each schema is built (src/zod-config.ts). */
async function loaded(load: () => Promise<Entry>): Promise<Entry> {
  (await import("./src/zod-config.ts")).parseWithoutCompiling();
  return load();
}

async function dispatch(argv: string[]): Promise<number> {
  const self = basename(process.argv0 ?? "anyperf").replace(/\.(exe|ts)$/, "");
  // NTttcp ships role-named binaries too (ntttcps sends, ntttcpr receives); the dialect reads argv0 for the role.
  const link = /^ntttcp[sr]$/i.test(self) ? "ntttcp" : self;
  if (dialects[link]) return withStatus(link, argv, await loaded(dialects[link]));
  const [cmd, ...rest] = argv;
  if (cmd === "--version" || cmd === "-V" || cmd === "version") {
    console.log(`anyperf ${VERSION}`);
    return 0;
  }
  if (cmd === undefined || cmd === "--help" || cmd === "-h" || cmd === "help") {
    console.log(USAGE);
    return cmd === undefined ? 2 : 0;
  }
  const load = native[cmd] ?? dialects[cmd];
  if (!load) {
    console.error(`anyperf: unknown command '${cmd}'\n${USAGE}`);
    return 2;
  }
  return withStatus(cmd, rest, await loaded(load));
}

guardStdStreams();

/** Exits once what was written to stdout/stderr is out, with a failed stream's exit code (src/output-failure.ts). */
async function exit(code: number): Promise<never> {
  await drainStdStreams();
  process.exit(exitCodeAfterStreams(code));
}

// Windows has no /proc: its CPU counters come through bun:ffi, which loads only by a dynamic import.
if (process.platform === "win32") await (await import("./src/sockopt/win32-times.ts")).loadWin32Times();

try {
  // A finished client exits at once: idle Workers, samplers or keep-alive sockets must not hold the process.
  await exit(await dispatch(process.argv.slice(2)));
} catch (e) {
  const { UserError } = await import("./src/errors.ts");
  if (e instanceof UserError) {
    console.error(`anyperf: ${e.message}`);
    // Exit explicitly: Deno's Workers cannot be unref'd and would keep the process alive.
    await exit(e.exitCode);
  } else if (e instanceof Error && e.name === "TypeError" && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS")) {
    // node's parseArgs explains a value starting with '-' in three lines; the user gets them as one. An unknown
    // option is told as such: node's advice on positionals after '--' only misleads someone who mistyped a flag.
    const unknown = e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /^Unknown option '([^']*)'/.exec(e.message)?.[1] : undefined;
    console.error(`anyperf: ${unknown !== undefined ? `unknown option '${unknown}'` : e.message.split("\n").map((l) => l.replace(/\.$/, "")).join("; ")}; see --help`);
    await exit(2);
  } else if (!process.env.ANYPERF_DEBUG) {
    // Safety net: a fault that escaped its mode is still one line (tests/fuzz/argv.test.ts fails on "please report").
    const { isZodError } = await import("./src/option-error.ts");
    const what = isZodError(e) ? `a value out of range (${e.issues[0]?.message ?? "invalid"})` : e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    console.error(`anyperf: internal error, ${what}; please report it with the command line (ANYPERF_DEBUG=1 shows the stack)`);
    await exit(70);
  } else throw e;
}
