import { getopt } from "./getopt.ts";

/**
 * netperf's and netserver's options as tables: each entry names its letters, whether getopt hands it a value, and
 * how it changes the parser's state. The getopt string is derived from the table, so a letter is accepted exactly
 * when something applies it (or is listed as accepted without effect).
 */

/** What a handler may do beyond changing state: print instead of running (first one wins), or read the next word. */
export interface OptionContext {
  letter: string;
  /** The option's argument; "" for a flag. */
  value: string;
  /** The word after the option, for netperf's optional arguments (`-c 100`, `-o list`). */
  peek: () => string | undefined;
  consume: () => void;
  /**
   * netperf prints the first of -h/-V it meets and runs nothing; on stdout when `stdout` says so (a test's -h and
   * `-o ?` print there although they exit 1), else on stdout exactly when the exit code is 0.
   */
  printOnce: (text: string, exitCode: number, stdout?: boolean) => void;
}

/** `K`: the kinds of test a table serves; an entry naming some is accepted without effect by the others. */
export interface OptionEntry<S, K extends string = never> {
  letters: string;
  takesValue: boolean;
  /** The kinds that apply the entry (all when absent). */
  tests?: readonly K[];
  /** The kinds whose getopt string has the letters (all when absent): the others refuse them. */
  accepted?: readonly K[];
  apply: (state: S, ctx: OptionContext) => void;
}

export type OptionTable<S, K extends string = never> = readonly OptionEntry<S, K>[];

export interface Printed {
  text: string;
  exitCode: number;
  stdout: boolean;
}

/** The getopt string ("a:bc:") the table stands for, for a test of kind `test`. */
export function getoptSpec<S, K extends string>(table: OptionTable<S, K>, test?: K): string {
  return table
    .filter((e) => e.accepted === undefined || (test !== undefined && e.accepted.includes(test)))
    .map((e) => [...e.letters].map((l) => (e.takesValue ? `${l}:` : l)).join("")).join("");
}

/**
 * Walks argv from `start` through the table for a test of kind `test`; the index past `--` (or argv.length) and what
 * was asked to be printed.
 */
export function parseWithTable<S, K extends string = never>(
  argv: readonly string[],
  start: number,
  table: OptionTable<S, K>,
  program: string,
  state: S,
  printed: { print?: Printed },
  test?: K,
): number {
  // A letter may have one entry per kind of test (netperf reads -m one way for omni, another for the classic tests).
  const accepts = (e: OptionEntry<S, K>) => e.accepted === undefined || (test !== undefined && e.accepted.includes(test));
  const byLetter = new Map(table.filter(accepts).flatMap((e) => [...e.letters].map((l) => [l, e] as const)));
  const printOnce = (text: string, exitCode: number, stdout = exitCode === 0) => void (printed.print ??= { text, exitCode, stdout });
  return getopt(argv, start, getoptSpec(table, test), program, ({ letter, value = "" }, peek, consume) => {
    const entry = byLetter.get(letter)!;
    if (entry.tests === undefined || (test !== undefined && entry.tests.includes(test))) entry.apply(state, { letter, value, peek, consume, printOnce });
  });
}

/** C's parse_address_family as netperf and netserver use it: substring tests, "6" first. */
export function addressFamily(text: string): "any" | "ipv4" | "ipv6" {
  if (text.includes("6")) return "ipv6";
  if (text.includes("inet") || text.includes("4")) return "ipv4";
  return "any";
}

/** The state the options both programs accept change. */
export interface SharedOptionState {
  family: "any" | "ipv4" | "ipv6";
  passphrase: string | undefined;
}

export const NETPERF_VERSION = "2.7.0";

/** -4, -6, -V and -Z: the options netperf and netserver both accept, with the same meaning. */
export const SHARED_OPTIONS: OptionTable<SharedOptionState> = [
  { letters: "4", takesValue: false, apply: (s) => void (s.family = "ipv4") },
  { letters: "6", takesValue: false, apply: (s) => void (s.family = "ipv6") },
  { letters: "V", takesValue: false, apply: (_, c) => c.printOnce(`Netperf version ${NETPERF_VERSION}\n`, 0) },
  // The passphrase field's size in netperf's request.
  { letters: "Z", takesValue: true, apply: (s, c) => void (s.passphrase = c.value.slice(0, 647)) },
];

/** Letters a program accepts and ignores (as its own build does for the tests anyperf runs). */
export function acceptedWithoutEffect<S, K extends string = never>(flags: string, withValue: string): OptionTable<S, K> {
  const none = () => undefined;
  return [
    { letters: flags, takesValue: false, apply: none },
    { letters: withValue, takesValue: true, apply: none },
  ];
}
