import { describe, expect, test } from "bun:test";
import { parseBufferMax, readTcpBufferCeilings, streamWindowBytes } from "./link-buffers.ts";

describe("TCP buffer ceilings", () => {
  test("parse", () => {
    expect(parseBufferMax("4096\t131072\t33554432\n")).toBe(33554432);
    expect(parseBufferMax("4194304\n")).toBe(4194304);
    expect(parseBufferMax("")).toBeUndefined();
    expect(parseBufferMax("4096 16384 -1")).toBeUndefined();
    expect(parseBufferMax(undefined)).toBeUndefined();
  });

  test("captured /proc/sys/net", () => {
    const proc = new URL("./testdata/link/veth/proc", import.meta.url).pathname;
    expect(readTcpBufferCeilings(proc)).toEqual({ send_max: 4194304, receive_max: 33554432, send_set_max: 4194304, receive_set_max: 4194304 });
    expect(readTcpBufferCeilings(`${proc}/absent`)).toEqual({});
  });

  test("one stream's window: the smaller end; -w capped by *_set_max", () => {
    const a = { send_max: 4_194_304, receive_max: 33_554_432, send_set_max: 212_992, receive_set_max: 212_992 };
    const b = { send_max: 8_388_608, receive_max: 6_291_456 };
    expect(streamWindowBytes(a, b)).toBe(4_194_304);
    expect(streamWindowBytes(b, a)).toBe(8_388_608);
    expect(streamWindowBytes(a, b, 1_000_000)).toBe(212_992);
    expect(streamWindowBytes(b, b, 1_000_000)).toBe(1_000_000);
    expect(streamWindowBytes(undefined, b)).toBe(6_291_456);
    expect(streamWindowBytes(undefined, undefined)).toBeUndefined();
    expect(streamWindowBytes({}, {})).toBeUndefined();
  });
});
