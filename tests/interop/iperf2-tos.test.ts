/**
 * A client's -S reaches the server in the extended header's TOS field (docs/protocols/iperf2.md §2.2), and stock
 * servers (2.1.8 and 2.2.1: Listener's apply of the client settings) set it on the accepted socket. Ours does too:
 * read back from the kernel with `ss --tos` on our server's data socket while the test runs. UDP: a stock server sets it
 * on the flow's connected socket; ours serves every flow from one socket, which carries the TOS of the flow it serves
 * (read back during a -S 0x10 flow, then during a flow without -S).
 */
import { expect, test } from "bun:test";
import { iperf2Peers } from "../support/stock-peers.ts";
import { freePorts } from "../support/processes.ts";
import { dataSockets, udpSockets } from "../support/ss.ts";
import { oursMain, stockPeer, waitFor } from "./iperf2-harness.ts";

for (const peer of iperf2Peers()) {
  test.skipIf(peer.version === undefined)(`${peer.label} -S 0x10: our server's socket carries TOS 0x10`, async () => {
    const port = freePorts(27990, 27999, 1);
    const srv = oursMain(["-s", "-p", String(port)]);
    try {
      await waitFor(srv, /Server listening/, 30_000);
      const c = stockPeer(peer)(["-c", "127.0.0.1", "-p", String(port), "-t", "2", "-S", "0x10"]);
      const sockets = await dataSockets(srv.pid, port, 200_000, 10_000, (found) => found.every((s) => s.tos === 0x10));
      const done = await c.done;
      expect(done.code, done.out).toBe(0);
      expect(sockets.map((s) => s.tos)).toEqual([0x10]);
      expect(srv.text()).not.toContain("Attempt to set");
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 60_000);
}

/** Polls our UDP socket's TOS until it reads `want` or `ms` runs out; returns the last reading. */
async function udpTos(pid: number, port: number, want: number, ms = 5000): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const tos = udpSockets(pid, port).map((s) => s.tos);
    if ((tos.length > 0 && tos.every((t) => t === want)) || Date.now() > until) return tos;
    await Bun.sleep(50);
  }
}

for (const peer of iperf2Peers()) {
  test.skipIf(peer.version === undefined)(`${peer.label} -u -S 0x10: our UDP server's socket carries TOS 0x10 for that flow, 0 for the next without -S`, async () => {
    const port = freePorts(27990, 27999, 1);
    const srv = oursMain(["-s", "-u", "-p", String(port)]);
    try {
      await waitFor(srv, /Server listening/, 30_000);
      expect(udpSockets(srv.pid, port).map((s) => s.tos)).toEqual([0]);
      const marked = stockPeer(peer)(["-c", "127.0.0.1", "-u", "-p", String(port), "-t", "1", "-S", "0x10"]);
      expect(await udpTos(srv.pid, port, 0x10)).toEqual([0x10]);
      const a = await marked.done;
      expect(a.code, a.out).toBe(0);
      expect(a.out).toContain("Server Report:");
      const plain = stockPeer(peer)(["-c", "127.0.0.1", "-u", "-p", String(port), "-t", "1"]);
      expect(await udpTos(srv.pid, port, 0)).toEqual([0]);
      const b = await plain.done;
      expect(b.code, b.out).toBe(0);
      expect(srv.text()).not.toContain("Attempt to set");
    } finally {
      srv.kill();
      await srv.done;
    }
  }, 60_000);
}

