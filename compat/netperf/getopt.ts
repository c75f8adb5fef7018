import { UserError } from "../../src/errors.ts";

/**
 * POSIX getopt as netperf uses it: clustered flags (`-cC`), glued values (`-l2`), stop at `--`. netperf also
 * peeks at the word after some flags (`-c 100`, `-o list`), so the caller gets the remaining words and says how
 * many it consumed.
 */

export interface Opt {
  letter: string;
  value?: string;
}

export type OptHandler = (opt: Opt, peek: () => string | undefined, consumePeeked: () => void) => void;

/**
 * Walks `argv` from `start` with the option string `spec` (letters, ':' after those taking a value). Returns the
 * index just past a `--`, or argv.length. Words that are not options are ignored, as netperf ignores them.
 */
export function getopt(argv: readonly string[], start: number, spec: string, program: string, onOpt: OptHandler): number {
  let i = start;
  while (i < argv.length) {
    const word = argv[i]!;
    if (word === "--") return i + 1;
    // Stock netperf and netserver reject --help ("invalid option -- '-'", then the usage); anyperf reads it as -h.
    if (word === "--help" && spec.includes("h")) {
      i++;
      onOpt({ letter: "h" }, () => argv[i], () => void i++);
      continue;
    }
    if (!word.startsWith("-") || word === "-") {
      i++;
      continue;
    }
    i++;
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      const at = spec.indexOf(letter);
      if (at < 0 || letter === ":") throw new UserError(`${program}: invalid option -- '${letter}': see ${program} -h`);
      const takesValue = spec[at + 1] === ":";
      if (!takesValue) {
        onOpt({ letter }, () => argv[i], () => void i++);
        continue;
      }
      let value: string;
      if (k + 1 < word.length) value = word.slice(k + 1);
      else if (i < argv.length) value = argv[i++]!;
      else throw new UserError(`${program}: option requires an argument -- '${letter}': see ${program} -h`);
      onOpt({ letter, value }, () => argv[i], () => void i++);
      break;
    }
  }
  return i;
}

/** netperf's break_args: "a,b" → [a, b]; "a" → [a, a]; ",b" → ["", b]. */
export function breakArgs(s: string): [string, string] {
  const comma = s.indexOf(",");
  if (comma < 0) return [s, s];
  return [s.slice(0, comma), s.slice(comma + 1)];
}

/** break_args_explicit: a single value sets only the first. */
export function breakArgsExplicit(s: string, sep = ","): [string, string] {
  const at = s.indexOf(sep);
  if (at < 0) return [s, ""];
  return [s.slice(0, at), s.slice(at + 1)];
}

/** C atoi: leading blanks, optional sign, digits; anything else ends it (0 when nothing parses). */
export function atoi(s: string): number {
  const m = /^\s*([+-]?\d+)/.exec(s);
  if (!m) return 0;
  const n = Number(m[1]);
  // atoi's int overflow is undefined; clamp to the C int range rather than wrap.
  return Math.max(-0x8000_0000, Math.min(0x7fff_ffff, n));
}

/** netperf's convert(): atoi, then ×1024 for each of K M G and ×1000 for k m g found anywhere in the word. */
export function convert(s: string): number {
  let base = atoi(s);
  if (s.includes("K")) base *= 1024;
  if (s.includes("M")) base *= 1024 * 1024;
  if (s.includes("G")) base *= 1024 * 1024 * 1024;
  if (s.includes("k")) base *= 1000;
  if (s.includes("m")) base *= 1000 * 1000;
  if (s.includes("g")) base *= 1000 * 1000 * 1000;
  // The C code keeps the result in an int (or unsigned); keep it in 32 bits the same way.
  return base | 0;
}

/** "a,b" split by netperf's break_args (a lone value stands for both) or `split`: each half given is parsed into its field. */
export function setHalves<K extends string>(
  target: Record<K, number>,
  keys: readonly [K, K],
  value: string,
  parse: (s: string, half: 0 | 1) => number,
  split: (s: string) => [string, string] = breakArgs,
): void {
  const [first, second] = split(value);
  if (first) target[keys[0]] = parse(first, 0);
  if (second) target[keys[1]] = parse(second, 1);
}

/** A port given to netperf, by atoi as netperf reads it, refused outside `min`..65535. */
export function portNumber(text: string, what: string, min = 0): number {
  const n = atoi(text);
  if (n < min || n > 65535) throw new UserError(`netperf: ${what} port ${text} is outside ${min}..65535`);
  return n;
}
