// Test Worker for sockopt.test.ts: reports its kernel thread id, then pins itself when asked.
import { loadSockopt } from "../sockopt.ts";

declare const self: Worker;

const so = await loadSockopt();
self.onmessage = (e: MessageEvent<{ cpu: number }>) => {
  try {
    so!.pinThread(e.data.cpu);
    self.postMessage({ pinned: true });
  } catch (err) {
    self.postMessage({ error: String(err) });
  }
};
self.postMessage({ tid: so?.threadId() });
