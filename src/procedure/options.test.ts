import { describe, expect, test } from "bun:test";
import { defaultHistoryPath, gridPoints, pointArgs, takeProcedureOptions } from "./options.ts";
import { UserError } from "../errors.ts";

describe("--repeat, --sweep, --history", () => {
  test("taken out of the command's argv, the rest left in order", () => {
    const p = takeProcedureOptions(["-t", "2", "--repeat", "3", "--sweep", "streams=1,2", "--sweep=length=1K,64K", "--history", "h.jsonl", "-P", "4"]);
    expect(p).toEqual({ rest: ["-t", "2", "-P", "4"], repeat: 3, sweeps: [{ key: "streams", values: ["1", "2"] }, { key: "length", values: ["1K", "64K"] }], history: "h.jsonl", historyGiven: true });
    expect(takeProcedureOptions(["--no-history"]).history).toBeUndefined();
  });

  test("the default history file follows XDG_STATE_HOME, else ~/.local/state", () => {
    expect(defaultHistoryPath({ XDG_STATE_HOME: "/s", HOME: "/h" })).toBe("/s/anyperf/history.jsonl");
    expect(defaultHistoryPath({ HOME: "/h" })).toBe("/h/.local/state/anyperf/history.jsonl");
  });

  test("several sweeps make a grid, the first key slowest; a point passes the command's own flags", () => {
    const pts = gridPoints([{ key: "streams", values: ["1", "2"] }, { key: "rate", values: ["10M", "20M"] }]);
    expect(pts).toEqual([{ streams: "1", rate: "10M" }, { streams: "1", rate: "20M" }, { streams: "2", rate: "10M" }, { streams: "2", rate: "20M" }]);
    expect(pointArgs(pts[3]!)).toEqual(["-P", "2", "-b", "20M"]);
    expect(gridPoints([])).toEqual([{}]);
  });

  test("mistakes: one line naming the flag and the fix, exit code 2", () => {
    for (const [argv, pattern] of [
      [["--repeat", "0"], /--repeat 0: pass a whole number/],
      [["--repeat"], /--repeat needs a value/],
      [["--sweep", "colour=1,2"], /--sweep colour=1,2: expected KEY=V1,V2/],
      [["--sweep", "streams=1,,2"], /none empty/],
      [["--sweep", "streams=1", "--sweep", "streams=2"], /same key twice/],
      [["--history", "x", "--no-history"], /--history and --no-history both given/],
    ] as const) {
      try {
        takeProcedureOptions([...argv]);
        throw new Error(`no error for ${argv.join(" ")}`);
      } catch (e) {
        expect(e).toBeInstanceOf(UserError);
        expect((e as UserError).message).toMatch(pattern);
        expect((e as UserError).exitCode).toBe(2);
      }
    }
  });
});
