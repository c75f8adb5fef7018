import { expect, test } from "bun:test";
import { workerEntry } from "./worker-pool.ts";

test("worker entry in the compiled binary: Bun's embedded root on Linux/macOS and on Windows", () => {
  expect(workerEntry("file:///$bunfs/root/anyperf")).toBe("/$bunfs/root/src/worker/data-worker.ts");
  expect(workerEntry("/$bunfs/root/anyperf")).toBe("/$bunfs/root/src/worker/data-worker.ts");
  expect(workerEntry("file:///B:/%7EBUN/root/anyperf-windows-x64.exe")).toBe("B:/~BUN/root/src/worker/data-worker.ts");
});

test("worker entry from source sits beside the engine", () => {
  expect(workerEntry("file:///repo/src/engine/worker-pool.ts")).toBe("file:///repo/src/worker/data-worker.ts");
});
