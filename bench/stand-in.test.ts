import { expect, test } from "bun:test";
import { StatusDocument } from "../src/status/schema.ts";
import { pollStatus } from "../src/status/poll.ts";
import { Child, waitListening } from "./processes.ts";
import { standInArgv, standInDocument } from "./stand-in.ts";

test("the stand-in's document is a real /status answer, as the poller checks every answer", () => {
  const doc = StatusDocument.parse(JSON.parse(standInDocument()));
  expect(doc.mode).toBe("loopback");
  expect(doc.test?.phase).toBe("measuring");
});

test("the stand-in process answers the poller with valid documents", async () => {
  const port = 24690;
  const child = new Child(standInArgv("127.0.0.1", port), 10_000);
  try {
    await waitListening(port, child);
    const r = await pollStatus(`http://127.0.0.1:${port}`, { hz: 20, durationMs: 300 });
    expect(r.requests).toBeGreaterThanOrEqual(5);
    expect(r.failures).toBe(0);
    expect(r.invalid).toBe(0);
  } finally {
    await child.stop();
  }
});
