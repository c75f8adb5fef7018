import { describe, expect, test } from "bun:test";
import { parseProcessStat } from "./process-stat.ts";
import { fixture } from "./testdata/fixture.ts";

describe("parseProcessStat", () => {
  test("captured stat of a process that burned CPU (python3: utime 94, stime 27)", () => {
    expect(parseProcessStat(fixture("proc-pid-stat-busy.txt"))).toEqual({
      pid: 7319, comm: "python3", state: "R", utime: 94, stime: 27, numThreads: 1,
    });
  });

  test("captured stat whose command name holds spaces and parentheses", () => {
    const s = parseProcessStat(fixture("proc-pid-stat-odd-comm.txt"));
    expect(s).toEqual({ pid: 7282, comm: "a) (b c", state: "S", utime: 0, stime: 0, numThreads: 1 });
  });

  test("hand-written: ') ' inside the name does not shift the fields", () => {
    expect(parseProcessStat(fixture("proc-pid-stat-hand.txt"))).toEqual({
      pid: 4242, comm: "x) ) y", state: "R", utime: 17, stime: 4, numThreads: 3,
    });
  });

  test("captured /proc/self/stat of cat parses", () => {
    expect(parseProcessStat(fixture("proc-self-stat.txt"))?.comm).toBe("cat");
  });

  test("truncated or foreign text -> undefined", () => {
    expect(parseProcessStat("4242 (x) R 1 2")).toBeUndefined();
    expect(parseProcessStat("no parentheses here")).toBeUndefined();
    expect(parseProcessStat("")).toBeUndefined();
  });
});
