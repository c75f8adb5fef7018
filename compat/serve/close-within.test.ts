import { expect, spyOn, test } from "bun:test";
import { closeWithin } from "./close-within.ts";

test("a server whose close() never settles is named and left behind after the bound", async () => {
  const err = spyOn(console, "error").mockImplementation(() => {});
  try {
    const t0 = performance.now();
    await closeWithin("iperf", { port: 1, close: () => new Promise<void>(() => {}) }, 50);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(err).toHaveBeenCalledWith("anyperf serve: the iperf server did not close within 0.05 s of the signal; exiting without it");
  } finally {
    err.mockRestore();
  }
});

test("a server that closes in time says nothing; one whose close() throws still throws", async () => {
  const err = spyOn(console, "error").mockImplementation(() => {});
  try {
    await closeWithin("iperf3", { port: 1, close: async () => {} }, 50);
    expect(err).not.toHaveBeenCalled();
    await expect(closeWithin("netserver", { port: 1, close: () => Promise.reject(new Error("boom")) }, 50)).rejects.toThrow("boom");
  } finally {
    err.mockRestore();
  }
});
