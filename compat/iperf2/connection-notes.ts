import { networkInterfaces } from "node:os";
import { formatFixed } from "../../src/units.ts";
import type { TcpInit } from "./tcp-stats.ts";
import { type Endpoint, tcpInitNote } from "./text-report.ts";

/**
 * What iperf 2.1.8 appends to a "[  1] local ... connected with ..." line, in its order: the direction, then with -e
 * the socket number and the peer's version, the TCP figures of the handshake, and with -e the connect time (clients)
 * and the wall-clock time of the connection. With -e the local address also names its interface ("127.0.0.1%lo").
 */

export interface ConnectionFacts {
  /** The client sends --isochronous frames: "(isoch)", first of all. */
  isochronous?: boolean;
  direction?: "reverse" | "full-duplex";
  /** The client starts at a --txstart-time. */
  epochStart?: boolean;
  /** The client asked for --trip-times. */
  tripTimes?: boolean;
  /** UDP tests without the final report exchange (-R implies it). */
  noUdpFin?: boolean;
  enhanced: boolean;
  /** The socket's descriptor number ("(sock=3)"). */
  sock?: number;
  /** "2.1.8" when the client's header carried a version. */
  peerVersion?: string;
  /** --tcp-quickack: the receiving end re-arms TCP_QUICKACK before each read ("(qack)", with or without -e). */
  quickAck?: boolean;
  init?: TcpInit;
  /** Client side of TCP: how long connect() took. */
  connectMs?: number;
  /** When the connection was made; not printed on the server side of -R (iperf leaves it out there). */
  at?: Date;
}

export function connectionNotes(f: ConnectionFacts): string[] {
  const notes: string[] = [];
  if (f.isochronous) notes.push("(isoch)");
  if (f.direction) notes.push(`(${f.direction})`);
  if (f.epochStart) notes.push("(epoch-start)");
  if (f.tripTimes) notes.push("(trip-times)");
  if (f.noUdpFin) notes.push("(no-udp-fin)");
  if (f.enhanced && f.sock !== undefined) notes.push(`(sock=${f.sock})`);
  if (f.enhanced && f.peerVersion) notes.push(`(peer ${f.peerVersion})`);
  if (f.quickAck) notes.push("(qack)");
  if (f.init) notes.push(tcpInitNote(f.init));
  if (f.enhanced && f.at) {
    if (f.connectMs !== undefined && f.connectMs > 0) notes.push(`(ct=${formatFixed(f.connectMs, 2, 4)} ms)`);
    notes.push(`on ${wallClockText(f.at)}`);
  }
  return notes;
}

/** Made once, when first asked for: making one costs 8 ms (ICU's time zones load), too much for every line. */
let zones: Intl.DateTimeFormat | undefined;
const zoneFormat = () => (zones ??= new Intl.DateTimeFormat("en-US", { timeZoneName: "short" }));

/** "2026-12-02 10:26:41 (UTC)": local time and the zone's abbreviation, as strftime's "%Y-%m-%d %H:%M:%S (%Z)". */
export function wallClockText(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  const zone = zoneFormat().formatToParts(d).find((x) => x.type === "timeZoneName")?.value ?? "UTC";
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} (${zone})`;
}

/** With -e the local address reads "127.0.0.1%lo": the interface that holds it, when there is exactly one. */
export function withInterface(local: Endpoint, enhanced: boolean): Endpoint {
  if (!enhanced) return local;
  const host = local.host.replace(/^::ffff:/, "");
  const names = Object.entries(networkInterfaces())
    .filter(([, addrs]) => addrs?.some((a) => a.address === host))
    .map(([name]) => name);
  return names.length === 1 ? { ...local, host: `${local.host}%${names[0]}` } : local;
}
