/**
 * Runs the node-compatible adapter through what the runners rely on and prints one JSON line of findings. Run under
 * Deno by node.test.ts (the adapter exists for Deno; Bun uses its native sockets).
 */
import { nodeNet } from "../node.ts";
import type { UdpSocket } from "../types.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listenFacts() {
  const h = { data() {} };
  const a = nodeNet.listen({ hostname: "127.0.0.1", port: 0, data: 0, socket: h });
  const port = a.port;
  let inUse: string | undefined;
  try {
    nodeNet.listen({ hostname: "127.0.0.1", port, data: 0, socket: h }).stop();
  } catch (e) {
    inUse = (e as { code?: string }).code ?? "threw without code";
  }
  // A TCP round trip through the listener proves it really listens on the port it reported.
  const echoed = await new Promise<string>((resolve, reject) => {
    const srv = nodeNet.listen({ hostname: "127.0.0.1", port: 0, data: 0, socket: { data: (s, d) => void s.write(d, 0, d.byteLength) } });
    const timer = setTimeout(() => reject(new Error("no echo within 5 s")), 5000);
    void nodeNet.connect({
      hostname: "127.0.0.1",
      port: srv.port,
      data: 0,
      socket: {
        data: (s, d) => {
          clearTimeout(timer);
          s.terminate();
          srv.stop();
          resolve(new TextDecoder().decode(d));
        },
      },
    }).then((s) => s.write(new TextEncoder().encode("ping"), 0, 4));
  });
  a.stop();
  return { port, inUse, echoed };
}

/** Receiver that records the sequence numbers (first 4 bytes) in arrival order. */
async function receiver() {
  const seqs: number[] = [];
  const rx = await nodeNet.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: { data: (_s, d) => void seqs.push(d.byteLength >= 4 ? new DataView(d.buffer, d.byteOffset).getUint32(0, true) : -1) },
  });
  return { rx, seqs };
}

async function sender(port: number, drains: { n: number }): Promise<UdpSocket> {
  return nodeNet.udpSocket({ connect: { hostname: "127.0.0.1", port }, socket: { drain: () => void drains.n++ } });
}

/** Like the UDP runner: one batch of buffers restamped in place before every sendMany. */
async function ordered(total: number) {
  const { rx, seqs } = await receiver();
  const drains = { n: 0 };
  const tx = await sender(rx.port, drains);
  const batch = Array.from({ length: 64 }, () => new Uint8Array(64));
  let seq = 0;
  while (seq < total) {
    const n = Math.min(batch.length, total - seq);
    for (let i = 0; i < n; i++) new DataView(batch[i]!.buffer).setUint32(0, seq + i, true);
    seq += tx.sendMany(n === batch.length ? batch : batch.slice(0, n));
    await sleep(1);
  }
  tx.close();
  await sleep(500);
  rx.close();
  let inversions = 0;
  for (let i = 1; i < seqs.length; i++) if (seqs[i]! <= seqs[i - 1]!) inversions++;
  return { sent: seq, received: seqs.length, inversions, last: seqs.at(-1) };
}

/** More than the adapter queues at once: some are refused, drain follows, and close still sends what was taken. */
async function backpressure() {
  const { rx, seqs } = await receiver();
  const drains = { n: 0 };
  const tx = await sender(rx.port, drains);
  const many = Array.from({ length: 10_000 }, (_, i) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, i, true);
    return b;
  });
  const accepted = tx.sendMany(many);
  await sleep(1000);
  const drainsBeforeClose = drains.n;
  // Five right before close, as an end marker is sent: none may be lost with the socket.
  const tail = [0, 1, 2, 3, 4].map((i) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, 1_000_000 + i, true);
    return b;
  });
  const tailAccepted = tx.sendMany(tail);
  tx.close();
  await sleep(500);
  rx.close();
  return { accepted, drainsBeforeClose, tailAccepted, tailReceived: seqs.filter((s) => s >= 1_000_000).length };
}

console.log(JSON.stringify({ listen: await listenFacts(), ordered: await ordered(3000), backpressure: await backpressure() }));
