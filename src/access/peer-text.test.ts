import { expect, test } from "bun:test";
import { peerText } from "./peer-text.ts";

test("peerText drops the IPv4-mapped prefix only", () => {
  expect(peerText("::ffff:127.0.0.1", 5)).toBe("127.0.0.1 port 5");
  expect(peerText("::1", 6)).toBe("::1 port 6");
  expect(peerText(undefined, undefined)).toBe("? port 0");
});
