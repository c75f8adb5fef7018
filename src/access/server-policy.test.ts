import { afterEach, describe, expect, test } from "bun:test";
import { UserError } from "../errors.ts";
import {
  applyServerPolicyOptions,
  busyMessage,
  checkTest,
  peerAllowed,
  policyLimits,
  serverPolicy,
  serverPolicyArgs,
  setServerPolicy,
  takeServerPolicyOptions,
  tighter,
} from "./server-policy.ts";

afterEach(() => setServerPolicy({}));

describe("takeServerPolicyOptions", () => {
  test("takes both spellings and leaves the rest in order", () => {
    const r = takeServerPolicyOptions(["-s", "--allow", "10.0.0.0/8,::1", "-p", "5201", "--max-streams=16", "--max-tests", "3", "--max-duration", "2.5", "--max-rate=1G"]);
    expect(r.rest).toEqual(["-s", "-p", "5201"]);
    expect(r.policy.allow?.map((c) => c.text)).toEqual(["10.0.0.0/8", "::1"]);
    expect(r.policy).toMatchObject({ maxStreams: 16, maxTests: 3, maxDurationS: 2.5, maxRateBps: 1e9 });
    expect(r.given).toEqual(["--allow", "--max-streams", "--max-tests", "--max-duration", "--max-rate"]);
  });
  test("stops at --", () => {
    expect(takeServerPolicyOptions(["--", "--allow", "x"]).rest).toEqual(["--", "--allow", "x"]);
  });
  test("bad values are one-line errors naming the flag", () => {
    expect(() => takeServerPolicyOptions(["--allow", "10.0.0.0/33"])).toThrow("--allow: '10.0.0.0/33' is not a CIDR: prefix must be 0-32");
    expect(() => takeServerPolicyOptions(["--max-streams", "0"])).toThrow("--max-streams needs a whole number above 0, got '0'");
    expect(() => takeServerPolicyOptions(["--max-duration", "-1"])).toThrow("--max-duration needs a number of seconds above 0");
    expect(() => takeServerPolicyOptions(["--max-rate", "fast"])).toThrow(UserError);
    expect(() => takeServerPolicyOptions(["--max-tests"])).toThrow("--max-tests needs a value");
  });
});

describe("applyServerPolicyOptions", () => {
  test("installs the policy for a server", () => {
    expect(applyServerPolicyOptions(["-s", "--max-streams", "4"], true)).toEqual(["-s"]);
    expect(serverPolicy().maxStreams).toBe(4);
  });
  test("refuses the options on a client", () => {
    expect(() => applyServerPolicyOptions(["-c", "h", "--allow", "::1"], false)).toThrow("--allow is a server option");
  });
  test("no options: an empty policy (a previous one is replaced)", () => {
    setServerPolicy({ maxTests: 2 });
    applyServerPolicyOptions(["-s"], true);
    expect(serverPolicy()).toEqual({});
  });
});

describe("checkTest", () => {
  const limits = policyLimits({ maxStreams: 16, maxDurationS: 30, maxRateBps: 1e8 });
  test("each limit, its value and its flag", () => {
    expect(checkTest(limits, { streams: 64 })).toEqual({ limit: "streams", message: "test asks for 64 streams; this server allows 16 (--max-streams)" });
    expect(checkTest(limits, { durationS: 60 })?.message).toBe("test asks for 60 s; this server allows 30 s (--max-duration)");
    expect(checkTest(limits, { durationS: Infinity })?.message).toBe("test asks for no time bound; this server allows 30 s (--max-duration)");
    expect(checkTest(limits, { rateBps: 2e9 })?.message).toBe("test asks for 2 Gbit/s; this server allows 100 Mbit/s (--max-rate)");
  });
  test("at the limit, or unknown, passes", () => {
    expect(checkTest(limits, { streams: 16, durationS: 30, rateBps: 1e8 })).toBeUndefined();
    expect(checkTest(limits, {})).toBeUndefined();
    expect(checkTest({}, { streams: 1000, durationS: 1e6, rateBps: 1e12 })).toBeUndefined();
  });
});

test("tighter picks the smaller set limit and names its flag", () => {
  expect(tighter(10, "--max-duration", 5, "--server-max-duration")).toEqual({ value: 5, flag: "--server-max-duration" });
  expect(tighter(3, "--max-duration", 5, "--server-max-duration")).toEqual({ value: 3, flag: "--max-duration" });
  expect(tighter(undefined, "--max-rate", 0, "--server-bitrate-limit")).toBeUndefined();
  expect(tighter(undefined, "--max-rate", 7, "--server-bitrate-limit")?.value).toBe(7);
});

test("busyMessage", () => {
  expect(busyMessage({ value: 2, flag: "--max-tests" }, 2)).toBe("2 tests running; this server allows 2 at once (--max-tests)");
});

test("peerAllowed: everyone without --allow, only listed networks with it", () => {
  expect(peerAllowed("203.0.113.9")).toBe(true);
  setServerPolicy(takeServerPolicyOptions(["--allow", "127.0.0.0/8"]).policy);
  expect(peerAllowed("::ffff:127.0.0.1")).toBe(true);
  expect(peerAllowed("10.0.0.1")).toBe(false);
  expect(peerAllowed(undefined)).toBe(false);
});

test("serverPolicyArgs gives back options that parse to the same policy", () => {
  const { policy } = takeServerPolicyOptions(["--allow", "10.0.0.0/8,::1", "--max-tests", "3", "--max-streams", "4", "--max-duration", "2.5", "--max-rate", "1.5G"]);
  const again = takeServerPolicyOptions(serverPolicyArgs(policy));
  expect(again.rest).toEqual([]);
  expect(again.policy).toEqual(policy);
  expect(serverPolicyArgs({})).toEqual([]);
});

