import { UserError } from "../../src/errors.ts";

/**
 * Which ntttcp dialect a command line is written in. `--windows` / `--linux` decide outright; otherwise the flags
 * that exist in only one tool decide (docs/protocols/ntttcp-interop.md §2). A command valid in both (e.g. `-r -m 4,*,ip
 * -t 300`) is read as ntttcp-for-linux, the tool this program runs beside.
 */

export type Dialect = "windows" | "linux";

/** Matched case-insensitively, as Windows does. */
const WINDOWS_ONLY = new Set([
  "-ns", "-wu", "-cd", "-xml", "-sb", "-rb", "-sp", "-ndl", "-nic", "-thr", "-hpt", "-to", "-na", "-icp", "-uc",
  "-uso", "-uro", "-rt", "-wa", "-hv", "-brn", "-lm", "-cfi", "-es", "-sam", "-qos", "-jm", "-ps", "-nsb", "-v",
]);
/** Matched exactly: ntttcp-for-linux is case-sensitive. */
const LINUX_ONLY = new Set(["-N", "-W", "-C", "-x", "-j", "-n", "-B", "-P", "-M", "-L", "-H", "-O", "-Q", "-V", "-D", "-e", "-b", "-f", "-h"]);

export interface Detection {
  dialect: Dialect;
  /** argv without --windows/--linux. */
  argv: string[];
  /** The flags that decided, for -V output and for error messages. */
  evidence: string[];
}

function looksLikeAddress(w: string | undefined): boolean {
  return w !== undefined && (/^\d{1,3}(\.\d{1,3}){3}$/.test(w) || w.includes(":"));
}

export function detectDialect(argvIn: readonly string[]): Detection {
  const forced = new Set(argvIn.filter((w) => w === "--windows" || w === "--linux"));
  const argv = argvIn.filter((w) => w !== "--windows" && w !== "--linux");
  if (forced.size === 2) throw new UserError("--windows and --linux both given: pass only the dialect your command is written in");
  if (forced.size === 1) return { dialect: forced.has("--windows") ? "windows" : "linux", argv, evidence: [...forced] };

  const win: string[] = [];
  const lin: string[] = [];
  let mappingWords = 0;
  let afterM = false;
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (afterM && !w.startsWith("-")) {
      mappingWords++;
      if (mappingWords === 2) win.push("second -m mapping");
      continue;
    }
    afterM = w.toLowerCase() === "-m";
    if (afterM) mappingWords = 0;
    // Exact Linux spellings first: -V, -N, -P… are Linux flags even though Windows would also accept them.
    if (LINUX_ONLY.has(w)) lin.push(w);
    else if (WINDOWS_ONLY.has(w.toLowerCase())) win.push(w);
    else if (w === "-a") {
      // Windows -a [n] is async I/O; Linux -a takes the sender's source address.
      if (looksLikeAddress(argv[i + 1])) lin.push("-a <address>");
      else win.push("-a");
    } else if (w.startsWith("--")) lin.push(w);
    else if (/^-[a-zA-Z6]/.test(w) && w.length > 2 && !WINDOWS_ONLY.has(w.toLowerCase()) && !["-xml", "-nic"].includes(w.toLowerCase())) {
      // Windows has no clustered flags or attached values: -s10.0.0.1, -p5001, -VN are getopt forms.
      lin.push(w);
    }
  }
  if (win.length && lin.length) {
    throw new UserError(
      `mixed ntttcp dialects: ${win.join(" ")} are Windows NTttcp flags but ${lin.join(" ")} are ntttcp-for-linux flags; ` +
        "pass --windows or --linux to say which one the command is written for",
    );
  }
  if (win.length) return { dialect: "windows", argv, evidence: win };
  return { dialect: "linux", argv, evidence: lin };
}
