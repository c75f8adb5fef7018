import { afterEach, expect, test } from "bun:test";
import * as net from "node:net";
import { HeldSyncPort } from "../../compat/ntttcp/held-sync-port.ts";
import { loadNet } from "../../src/net/net.ts";
import type { Transport } from "../../interop/ntttcp/transport.ts";
import { freePorts, sleep } from "../support/processes.ts";

/**
 * A -H receiver's Linux sync port between tests (compat/ntttcp/held-sync-port.ts): a sender that connects once a
 * test has finished is handed, with what it already sent, to the next test, not to the finished one.
 */

let held: HeldSyncPort | undefined;
afterEach(() => held?.stop());

const X = new Uint8Array([0, 0, 0, 0x58]);

function recorder() {
  const got: { t: Transport; bytes: number[] }[] = [];
  const accept = (t: Transport) => {
    const c = { t, bytes: [] as number[] };
    got.push(c);
    return { onData: (b: Uint8Array) => c.bytes.push(...b), onClose: () => {} };
  };
  return { got, accept };
}

async function until(check: () => boolean): Promise<void> {
  for (const end = Date.now() + 5000; !check() && Date.now() < end; ) await sleep(10);
}

test("a sender arriving between tests waits, its bytes kept, for the next test; the finished one never sees it", async () => {
  const port = freePorts(24800, 24899, 1);
  held = new HeldSyncPort(await loadNet());
  const first = recorder();
  held.open("127.0.0.1", port, first.accept, () => true);
  held.close();
  const s = net.connect({ host: "127.0.0.1", port });
  await new Promise((r) => s.once("connect", r));
  s.write(X);
  await sleep(200);
  const next = recorder();
  held.open("127.0.0.1", port, next.accept, () => true);
  await until(() => next.got[0]?.bytes.length === 4);
  expect(first.got).toHaveLength(0);
  expect(next.got.map((c) => c.bytes)).toEqual([[...X]]);
  // It talks to the next test from then on.
  s.write(X);
  await until(() => next.got[0]?.bytes.length === 8);
  expect(next.got[0]!.bytes).toHaveLength(8);
  s.destroy();
});

test("a waiting connection that sends more than a sender would is closed", async () => {
  const port = freePorts(24800, 24899, 1);
  held = new HeldSyncPort(await loadNet());
  held.open("127.0.0.1", port, recorder().accept, () => true);
  held.close();
  const s = net.connect({ host: "127.0.0.1", port });
  const closed = new Promise((r) => s.once("close", r));
  s.on("error", () => {});
  await new Promise((r) => s.once("connect", r));
  s.write(new Uint8Array(1024));
  expect(await Promise.race([closed.then(() => "closed"), sleep(5000).then(() => "open")])).toBe("closed");
});
