/**
 * Bugs the fuzz targets found in modules this suite does not own, reported to their owners. Each predicate
 * recognises exactly that bug's symptom, so a target can go on fuzzing past it; known-bugs.test.ts holds the
 * minimal failing input of each as `test.failing`. When a fix lands, that test starts failing: delete it and the
 * predicate together.
 */
export const KNOWN = {
  /**
   * iperf3 -I (--pidfile) in a missing or unwritable directory escapes as an internal error (issue 21 item 15: the
   * -I fix is another change's). argv.test.ts passes such a case over; known-bugs.test.ts holds the minimal one.
   */
  iperf3PidfileBadPath: (argv: readonly string[], output: string): boolean =>
    argv[0] === "iperf3" && argv.some((w) => /^(-I|--pidfile)/.test(w)) && /internal error, Error: E[A-Z]+: /.test(output),
};
