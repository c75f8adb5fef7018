import type { Cidr } from "../../src/access/cidr.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";
import type { NtttcpPlan } from "./plan.ts";

/**
 * The data plane of an ntttcp plan, as engine StreamSpecs. Both tools send raw payload without any header:
 * TCP bytes are 'A' (0x41, what Windows -d checks), Linux UDP datagrams 'B' (0x42).
 */

export const TCP_FILL = 0x41;
export const LINUX_UDP_FILL = 0x42;
/** A UDP receiver reads whole datagrams whatever the peer's -l/-b, so its byte count matches the sender's. */
const MAX_DATAGRAM = 65535;

/** Which plan thread each stream belongs to (several streams per thread only with -f and -l > 1). */
export interface StreamLayout {
  specs: StreamSpecInput[];
  threadOf: number[];
}

function options(p: NtttcpPlan) {
  return {
    ...(p.sendBuffer ? { sendBuffer: p.sendBuffer } : {}),
    ...(p.recvBuffer ? { recvBuffer: p.recvBuffer } : {}),
    ...(p.noDelay && p.protocol === "tcp" ? { noDelay: true } : {}),
    ...(p.pacingBytesPerSecondPerSocket > 0 ? { pacingRate: p.pacingBytesPerSecondPerSocket } : {}),
  };
}

/**
 * Socket receive buffer for UDP receivers when the user set none: the stock Linux sender paces -B by bursts of
 * datagrams (on/off every 0.5 ms), which overflow a default 208 KiB buffer and look like loss. Only asked for when
 * socket options are available (Linux/Bun); the kernel caps it at net.core.rmem_max.
 */
export const UDP_RECV_BUFFER = 4 * 1024 * 1024;

/** The mapping's CPU: every stream of that thread runs on a Worker pinned there. */
function pin(t: NtttcpPlan["threads"][number]): { cpu?: number } {
  return t.cpu === null ? {} : { cpu: t.cpu };
}

/**
 * Windows count mode's -n: receive calls per receiver thread (0 in time mode). 5.40's thread stops after that many,
 * each of at most -l bytes, and closes with whatever is left unread (docs/protocols/ntttcp-windows.md §5.2).
 */
export const countReads = (p: NtttcpPlan): number => (p.countBytesPerThread === null ? 0 : p.countBytesPerThread / p.writeSize);

/** `allow`: the server's --allow list, checked where the data Workers accept connections and read datagrams. */
export function receiverSpecs(p: NtttcpPlan, env: { sockopt: boolean; allow?: Cidr[] } = { sockopt: false }): StreamLayout {
  const family = p.family;
  const allow = env.allow ? { allow: env.allow } : {};
  const udpOptions = { ...options(p), ...(env.sockopt && !p.recvBuffer ? { recvBuffer: UDP_RECV_BUFFER } : {}) };
  const reads = countReads(p);
  const specs = p.threads.map((t, id): StreamSpecInput =>
    p.protocol === "udp"
      ? // Windows count mode: the thread ends after -n datagrams (5.40 counts reads; a lost one keeps it waiting).
        { kind: "udp-recv", id, listen: { host: t.host, port: t.port }, datagramSize: MAX_DATAGRAM, format: "none", limitPackets: reads, options: udpOptions, family, ...allow, ...pin(t) }
      : // connections 1 = Windows: one accept per port; 0 = Linux: any number. The test's clock decides the end, not
        // EOF, except in Windows count mode: the thread ends after -n reads, or earlier on its sender's close.
        { kind: "tcp-recv", id, listen: { host: t.host, port: t.port }, connections: t.connections, readSize: p.readSize, endOnEof: reads > 0, limitPackets: reads, options: options(p), family, ...allow, ...pin(t) },
  );
  return { specs, threadOf: p.threads.map((t) => t.index) };
}

export function senderSpecs(p: NtttcpPlan, limits: { bytesPerThread?: number } = {}): StreamLayout {
  const specs: StreamSpecInput[] = [];
  const threadOf: number[] = [];
  const rate = p.rateBitsPerSecondPerThread > 0 ? { bitsPerSecond: p.rateBitsPerSecondPerThread } : {};
  const limitBytes = limits.bytesPerThread ?? p.countBytesPerThread ?? 0;
  for (const t of p.threads) {
    const connect = { host: t.host, port: t.port };
    if (p.protocol === "udp") {
      // One connected UDP socket per connection, each its own stream.
      for (let c = 0; c < t.connections; c++) {
        specs.push({
          kind: "udp-send",
          id: specs.length,
          connect,
          ...(p.sourceAddress ? { bind: { host: p.sourceAddress, port: 0 } } : {}),
          datagramSize: Math.min(p.writeSize, 65507),
          format: "none",
          fill: p.dialect === "linux" ? LINUX_UDP_FILL : TCP_FILL,
          rate,
          limitBytes,
          options: options(p),
          ...pin(t),
        });
        threadOf.push(t.index);
      }
      continue;
    }
    // -f pins one source port per connection (F + k·l + i), so each connection needs its own stream then.
    const split = p.sourcePort > 0 ? t.connections : 1;
    for (let c = 0; c < split; c++) {
      const bindPort = p.sourcePort > 0 ? p.sourcePort + t.index * t.connections + c : 0;
      specs.push({
        kind: "tcp-send",
        id: specs.length,
        connect,
        ...(p.sourceAddress || bindPort ? { bind: { host: p.sourceAddress ?? (p.family === "ipv6" ? "::" : "0.0.0.0"), port: bindPort } } : {}),
        connections: split > 1 ? 1 : t.connections,
        writeSize: p.writeSize,
        fill: TCP_FILL,
        rate: split > 1 && rate.bitsPerSecond ? { bitsPerSecond: rate.bitsPerSecond / split } : rate,
        limitBytes: split > 1 && limitBytes ? Math.ceil(limitBytes / split) : limitBytes,
        end: "close",
        options: options(p),
        ...pin(t),
      });
      threadOf.push(t.index);
    }
  }
  return { specs, threadOf };
}
