import { expect, test } from "bun:test";
import { directionOf, place, type WorkerLoad } from "./placement.ts";
import { StreamSpec } from "../stream-spec.ts";

const load = (send: number, recv: number, both = 0, rr = 0): WorkerLoad => ({ send, recv, both, rr });

test("an idle Worker first; where bulk streams go both ways, then a new one while the pool may grow", () => {
  expect(place([load(1, 0), load(0, 0)], "send", true)).toBe(1);
  expect(place([load(0, 1), load(0, 1)], "send", true)).toBe("grow");
  expect(place([load(1, 0), load(0, 1)], "recv", true)).toBe("grow");
  expect(place([], "recv", false)).toBe("grow");
});

test("one direction only, or sending and receiving on one socket, the pool does not grow", () => {
  expect(place([load(0, 0, 1), load(1, 1)], "both", true)).toBe(0);
  expect(place([load(0, 0, 1), load(0, 0, 1)], "send", true)).toBe(0);
  expect(place([load(0, 2), load(0, 1)], "recv", true)).toBe(1);
  expect(place([load(3, 0), load(2, 0)], "send", true)).toBe(1);
});

test("a test's first stream finding every Worker busy gets a new one while the pool may grow; its further streams share", () => {
  expect(place([load(0, 1), load(0, 1)], "recv", true, true)).toBe("grow");
  expect(place([load(2, 0), load(1, 0)], "send", true, true)).toBe("grow");
  expect(place([load(0, 1), load(0, 0)], "recv", true, true)).toBe(1);
  expect(place([load(0, 2), load(0, 1)], "recv", false, true)).toBe(1);
  expect(place([load(0, 2), load(0, 1)], "recv", true, false)).toBe(1);
});

test("request/response streams keep to Workers without bulk streams, and bulk streams keep off theirs", () => {
  // With other request/response streams, the least loaded; beside bulk streams only when the pool cannot grow.
  expect(place([load(0, 0, 0, 2), load(0, 0, 0, 1)], "rr", true)).toBe(1);
  expect(place([load(1, 0), load(0, 0, 0, 3)], "rr", true)).toBe(1);
  expect(place([load(0, 1), load(1, 0)], "rr", true)).toBe("grow");
  expect(place([load(0, 2), load(1, 0, 0, 1)], "rr", false)).toBe(1);
  // A bulk stream takes a Worker without request/response streams, or a new one.
  expect(place([load(0, 0, 0, 1), load(2, 0)], "send", true)).toBe(1);
  expect(place([load(0, 0, 0, 1), load(0, 0, 0, 1)], "send", true)).toBe("grow");
  expect(place([load(0, 0, 0, 1), load(3, 0)], "send", false)).toBe(1);
  expect(place([load(0, 0, 0, 1), load(1, 0, 0, 2)], "recv", false)).toBe(0);
});

test("at its size the pool puts a stream on the least loaded Worker, ties to the one going its way", () => {
  expect(place([load(0, 2), load(1, 0)], "recv", false)).toBe(1);
  expect(place([load(0, 1), load(1, 0)], "send", false)).toBe(1);
  expect(place([load(0, 1), load(1, 0)], "recv", false)).toBe(0);
  expect(place([load(1, 1), load(0, 0, 2)], "send", false)).toBe(0);
});

test("directions of the stream kinds", () => {
  const send = { kind: "tcp-send", id: 0, connect: { host: "127.0.0.1", port: 1 } } as const;
  expect(directionOf(StreamSpec.parse(send))).toBe("send");
  expect(directionOf(StreamSpec.parse({ ...send, countReceived: true }))).toBe("both");
  expect(directionOf(StreamSpec.parse({ kind: "tcp-recv", id: 0, listen: { host: "127.0.0.1", port: 0 } }))).toBe("recv");
  expect(directionOf(StreamSpec.parse({ kind: "rr-server", id: 0, transport: "tcp", listen: { host: "127.0.0.1", port: 0 } }))).toBe("rr");
});
