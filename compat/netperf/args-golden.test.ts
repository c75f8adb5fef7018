import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { parseNetperfArgs } from "./netperf-args.ts";

/**
 * Characterisation of netperf's command line: every global and test-specific option, alone, with good and bad values,
 * under each test name, and in pairs, run through parseNetperfArgs. The golden file holds what each argv planned (the
 * fields that differ from the test's plain plan), printed or refused. A change to the parser that changes any line
 * must be a deliberate fix; ANYPERF_UPDATE_GOLDEN=1 rewrites the file.
 */

const GOLDEN = new URL("../../tests/fixtures/netperf/args-golden.txt", import.meta.url);

const TESTS = ["omni", "TCP_STREAM", "TCP_MAERTS", "TCP_RR", "TCP_CRR", "UDP_STREAM", "UDP_RR", "TCP_CC", "TCP_MSS", "TCP_SENDFILE", "UUID"];
const GLOBAL_FLAGS = "46CcdhjNrSV";
const GLOBAL_VALUED = "AaBbDfFHiIKkLlnOoPpsTtvWwYyZ";
const TEST_FLAGS = "46aBcCDFghIkKnNoOUV";
const TEST_VALUED = "bdeGHiKjlLmMpPrRsStTuwW";
/** A value of each shape netperf's break_args, convert and atoi see differently, and some they refuse. */
const VALUES = ["0", "1", "7", "-3", "64K", "2k", "1M", "1g", "5,", ",6", "5,6", "1K,2m", "abc", "x,y", "70000", "65535", "4", "6", "inet6", "h1/24,4", "tcp", "udp", "sctp", "send", "recv", "rr", "xmit|recv", "0x6", "ef", "af21", "cs3", "256", "3,2", "99,5", "95", "", ","];
const FOLLOWERS = [[], ["?"], ["THROUGHPUT,P99_LATENCY"], ["-r", "8"], ["100"], ["-D"]];

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

function outcome(argv: string[]): unknown {
  try {
    return parseNetperfArgs(argv);
  } catch (e) {
    return { error: (e as Error).constructor.name, message: (e as Error).message };
  }
}

/** The outcome as one line: a plan by the fields that differ from `base`, printed text by its length and digest. */
function describe(argv: string[], base: Record<string, unknown> | undefined): string {
  const o = outcome(argv) as Record<string, unknown>;
  if ("text" in o) return JSON.stringify({ kind: o.kind, exitCode: o.exitCode, chars: (o.text as string).length, sha: digest(o.text as string) });
  if (!("plan" in o) || base === undefined) return JSON.stringify(o);
  const plan = o.plan as Record<string, unknown>;
  const changed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plan)) {
    if (k !== "commandLine" && JSON.stringify(v) !== JSON.stringify(base[k])) changed[k] = v;
  }
  for (const k of Object.keys(base)) if (!(k in plan)) changed[k] = "<absent>";
  return JSON.stringify({ ...o, plan: changed });
}

function corpus(): string[][] {
  const out: string[][] = [[]];
  for (const l of GLOBAL_FLAGS) out.push([`-${l}`], [`-${l}`, "-t", "TCP_RR"]);
  for (const l of GLOBAL_VALUED) {
    for (const v of VALUES) out.push([`-${l}`, v]);
    out.push([`-${l}`], [`-${l}2`]);
  }
  // Other spellings, the calibration tests and an unknown test: the name alone and with one option of each kind.
  for (const t of ["tcp_rr", "Omni", "loc_cpu", "REM_CPU", "SCTP_STREAM", "uuid"]) out.push(["-t", t], ["-t", t, "--", "-r", "5,6"], ["-t", t, "--", "-o", "?"], ["-t", t, "--", "-z"]);
  for (const t of TESTS) {
    out.push(["-t", t]);
    for (const l of TEST_FLAGS) {
      for (const f of FOLLOWERS) out.push(["-t", t, "--", `-${l}`, ...f]);
    }
    for (const l of TEST_VALUED) {
      for (const v of VALUES) out.push(["-t", t, "--", `-${l}`, v]);
      out.push(["-t", t, "--", `-${l}`]);
    }
    out.push(["-t", t, "--", "-z"], ["-t", t, "--", "-hV"], ["-t", t, "-l", "-100"], ["-t", t, "-f", "x"], ["-t", t, "-c", "-C", "50"]);
  }
  // Options that interact: each pair in both orders, under a stream and a request/response test.
  const pairs = [["-d", "recv"], ["-d", "rr"], ["-r", "32,64"], ["-T", "udp"], ["-c"], ["-m", "64K"], ["-M", "1M"], ["-o"], ["-O", "THROUGHPUT"], ["-k", "?"], ["-H", "::1,6"], ["-4"], ["-6"], ["-P", "0,70000"], ["-K", "cubic,bbr"], ["-s", "128K"]];
  for (const t of ["omni", "TCP_RR", "UDP_STREAM", "TCP_CC"]) {
    for (const a of pairs) for (const b of pairs) if (a !== b) out.push(["-t", t, "--", ...a, ...b]);
  }
  const globalPairs = [["-i", "10,3"], ["-I", "95,2"], ["-I", "90"], ["-6"], ["-H", "h,4"], ["-L", "l,inet6"], ["-V"], ["-h"], ["-l", "-5"], ["-f", "x"], ["-c", "7"], ["--instances", "3"]];
  for (const a of globalPairs) for (const b of globalPairs) if (a !== b) out.push([...a, ...b, "-t", "UDP_RR"]);
  out.push(["--instances"], ["--instances=0"], ["--instances=10001"], ["-H", "h", "--", "-m", "1M"], ["-t", "UDP_STREAM", "--", "-m", "65508"], ["-t", "UDP_STREAM", "--", "-m", "65507"], ["--", "--help"], ["--help"]);
  return out;
}

test("netperf argv corpus: every outcome matches the golden record", () => {
  const bases = new Map<string, Record<string, unknown> | undefined>();
  const baseFor = (argv: string[]) => {
    const t = argv[argv.indexOf("-t") + 1] ?? "TCP_STREAM";
    const name = argv.includes("-t") ? t : "TCP_STREAM";
    if (!bases.has(name)) {
      const o = outcome(["-t", name]) as { plan?: Record<string, unknown> };
      bases.set(name, o.plan);
    }
    return bases.get(name);
  };
  const lines = corpus().map((argv) => `${JSON.stringify(argv)} => ${describe(argv, baseFor(argv))}`);
  const text = `${lines.join("\n")}\n`;
  if (process.env.ANYPERF_UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, text);
  expect(lines.length).toBeGreaterThan(5000);
  const want = readFileSync(GOLDEN, "utf8").split("\n");
  const got = text.split("\n");
  const differ = got.flatMap((line, i) => (line === want[i] ? [] : [`- ${want[i]}\n+ ${line}`]));
  expect(differ.slice(0, 20).join("\n")).toBe("");
  expect(got.length).toBe(want.length);
});
