import { describe, expect, test } from "bun:test";
import { shortRun } from "./short-run.ts";

const at = "iperf server at 127.0.0.1:5001";

describe("shortRun", () => {
  test("-t: whole when it ran the time asked, or at most the slack (0.25 s, or 5 % of a long test) less", () => {
    expect(shortRun(at, { durationS: 4, bytes: 0 }, { seconds: 4.02, bytes: 1 })).toBeUndefined();
    expect(shortRun(at, { durationS: 4, bytes: 0 }, { seconds: 3.76, bytes: 1 })).toBeUndefined();
    expect(shortRun(at, { durationS: 60, bytes: 0 }, { seconds: 57.1, bytes: 1 })).toBeUndefined();
    expect(shortRun(at, { durationS: 60, bytes: 0 }, { seconds: 56.9, bytes: 1 })).toMatch(/after 56\.90 s of the 60 s/);
  });

  test("-t: a server killed half way is named, with the seconds the figures cover", () => {
    expect(shortRun(at, { durationS: 4, bytes: 0 }, { seconds: 1.853, bytes: 1 })).toBe(
      "iperf server at 127.0.0.1:5001 ended the test after 1.85 s of the 4 s asked (-t): it stopped or was killed mid-test; the figures cover those 1.85 s",
    );
  });

  test("-n: whole when every byte asked moved, whatever the time", () => {
    expect(shortRun(at, { durationS: 10, bytes: 1000 }, { seconds: 0.01, bytes: 1000 })).toBeUndefined();
    expect(shortRun(at, { durationS: 10, bytes: 1000 }, { seconds: 0.01, bytes: 600 })).toMatch(/after 600 of the 1000 bytes asked \(-n\)/);
  });
});
