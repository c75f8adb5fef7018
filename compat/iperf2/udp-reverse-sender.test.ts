import { expect, test } from "bun:test";
import type { UdpSocket } from "../../src/net/types.ts";
import { MAX_UDP_PAYLOAD, UdpReverseSender } from "./udp-reverse-sender.ts";

/** A socket that keeps the length of every datagram it is asked to send. */
function recordingSocket(): UdpSocket & { sizes: number[] } {
  const sizes: number[] = [];
  return {
    sizes,
    port: 1,
    closed: false,
    send(d: Uint8Array) {
      sizes.push(d.length);
      return true;
    },
    sendMany: () => 0,
    close() {},
  };
}

// Found by tests/abuse/iperf2.test.ts: one UDP datagram whose header asked for -R with -l 2^31-1 made the server
// allocate and fill 2 GiB on its main thread, and the stock clients it was serving lost their reports meanwhile.
test("a reverse request's datagram size from the wire is capped at the UDP maximum", async () => {
  const sock = recordingSocket();
  const sender = new UdpReverseSender(sock, { host: "127.0.0.1", port: 9 }, 0x7fffffff, { value: 0, units: "bps" }, { kind: "bytes", bytes: 3 * MAX_UDP_PAYLOAD });
  sender.start();
  const r = await sender.done;
  expect(r.datagrams).toBe(3);
  expect(r.bytes).toBe(3 * MAX_UDP_PAYLOAD);
  expect(Math.max(...sock.sizes)).toBe(MAX_UDP_PAYLOAD);
});

test("an ordinary size is kept", async () => {
  const sock = recordingSocket();
  const sender = new UdpReverseSender(sock, { host: "127.0.0.1", port: 9 }, 1470, { value: 0, units: "bps" }, { kind: "bytes", bytes: 1470 * 2 });
  sender.start();
  await sender.done;
  // Two data datagrams, then the FIN twice.
  expect(sock.sizes).toEqual([1470, 1470, 1470, 1470]);
});
