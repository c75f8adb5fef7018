/*
 * rtnetlink's traffic-control dump, pure: the request bytes for RTM_GETQDISC / RTM_GETTCLASS on one interface, and a
 * reader of the kernel's answer (include/uapi/linux/netlink.h, rtnetlink.h, pkt_sched.h) fed whatever recv() returned,
 * split anywhere. Only what names a shaper is decoded: each qdisc's or class's kind and, for tbf and htb, its rate.
 */

export const RTM_GETQDISC = 38;
export const RTM_GETTCLASS = 42;
const RTM_NEWQDISC = 36;
const RTM_NEWTCLASS = 40;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_HDRLEN = 16;
const TCMSG_LEN = 20;
/** Longer than any traffic-control message (a few hundred bytes); a longer length is a broken stream. */
export const NLMSG_MAX = 64 * 1024;

const TCA_KIND = 1;
const TCA_OPTIONS = 2;
const TCA_STATS2 = 7;
/** In TCA_STATS2: struct gnet_stats_queue { qlen, backlog, drops, requeues, overlimits }, u32 each. */
const TCA_STATS_QUEUE = 3;
const QUEUE_BACKLOG_AT = 4;
const TCA_TBF_PARMS = 1;
const TCA_TBF_RATE64 = 4;
const TCA_HTB_PARMS = 1;
const TCA_HTB_RATE64 = 6;
const TCA_HTB_CEIL64 = 7;
/** struct tc_ratespec: cell_log u8, linklayer u8, overhead u16, cell_align s16, mpu u16, rate u32 (bytes/s). */
const RATESPEC_RATE_AT = 8;
const RATESPEC_LEN = 12;

/** A qdisc or class on an interface, and the rate it shapes to (tbf: its rate; htb class: rate and ceil). */
export interface TcEntry {
  what: "qdisc" | "class";
  ifindex: number;
  handle: number;
  parent: number;
  kind: string;
  rate_bps?: number;
  ceil_bps?: number;
  /** Bytes waiting in it when the kernel answered (a root tbf's include its inner queue's). */
  backlog_bytes?: number;
}

/** The dump request for one interface's qdiscs or classes (the class dump needs the interface; the qdisc dump is filtered by us too). */
export function encodeTcDump(type: typeof RTM_GETQDISC | typeof RTM_GETTCLASS, seq: number, ifindex: number): Uint8Array {
  const b = new Uint8Array(NLMSG_HDRLEN + TCMSG_LEN);
  const v = new DataView(b.buffer);
  v.setUint32(0, b.length, true);
  v.setUint16(4, type, true);
  v.setUint16(6, NLM_F_REQUEST | NLM_F_DUMP, true);
  v.setUint32(8, seq, true);
  v.setInt32(NLMSG_HDRLEN + 4, ifindex, true);
  return b;
}

const align4 = (n: number) => (n + 3) & ~3;

/** rtattrs in bytes[from, to): type → payload. */
function attrs(bytes: Uint8Array, from: number, to: number): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let at = from; at + 4 <= to; ) {
    const len = v.getUint16(at, true);
    if (len < 4 || at + len > to) break;
    // NLA_F_NESTED and NLA_F_NET_BYTEORDER ride in the type's top bits.
    out.set(v.getUint16(at + 2, true) & 0x3fff, bytes.subarray(at + 4, at + len));
    at += align4(len);
  }
  return out;
}

const u32 = (p: Uint8Array | undefined, at = 0) => (p && p.length >= at + 4 ? new DataView(p.buffer, p.byteOffset, p.length).getUint32(at, true) : undefined);
const u64 = (p: Uint8Array | undefined) => (p && p.length >= 8 ? Number(new DataView(p.buffer, p.byteOffset, p.length).getBigUint64(0, true)) : undefined);
/** A ratespec's bytes/s, or its 64-bit companion attribute when the kernel sent one (rates ≥ 2³² bytes/s), as bits/s. */
const rateBps = (spec: Uint8Array | undefined, at: number, wide: Uint8Array | undefined) => {
  const r = u64(wide) ?? (spec && spec.length >= at + RATESPEC_LEN ? u32(spec, at + RATESPEC_RATE_AT) : undefined);
  return r === undefined || r === 0 ? undefined : r * 8;
};

function entry(type: number, body: Uint8Array): TcEntry | undefined {
  if (body.length < TCMSG_LEN) return undefined;
  const v = new DataView(body.buffer, body.byteOffset, body.length);
  const a = attrs(body, TCMSG_LEN, body.length);
  const kindBytes = a.get(TCA_KIND);
  if (!kindBytes) return undefined;
  const nul = kindBytes.indexOf(0);
  const kind = new TextDecoder().decode(kindBytes.subarray(0, nul < 0 ? kindBytes.length : nul));
  const e: TcEntry = { what: type === RTM_NEWQDISC ? "qdisc" : "class", ifindex: v.getInt32(4, true), handle: v.getUint32(8, true), parent: v.getUint32(12, true), kind };
  const stats = a.get(TCA_STATS2);
  const backlog = stats && e.what === "qdisc" ? u32(attrs(stats, 0, stats.length).get(TCA_STATS_QUEUE), QUEUE_BACKLOG_AT) : undefined;
  if (backlog !== undefined) e.backlog_bytes = backlog;
  const opts = a.get(TCA_OPTIONS);
  if (!opts) return e;
  const o = attrs(opts, 0, opts.length);
  if (kind === "tbf") {
    const rate = rateBps(o.get(TCA_TBF_PARMS), 0, o.get(TCA_TBF_RATE64));
    if (rate !== undefined) e.rate_bps = rate;
  } else if (kind === "htb" && e.what === "class") {
    const parms = o.get(TCA_HTB_PARMS);
    const rate = rateBps(parms, 0, o.get(TCA_HTB_RATE64));
    const ceil = rateBps(parms, RATESPEC_LEN, o.get(TCA_HTB_CEIL64));
    if (rate !== undefined) e.rate_bps = rate;
    if (ceil !== undefined) e.ceil_bps = ceil;
  }
  return e;
}

/** Reads one dump's answer as it arrives: entries so far, and whether NLMSG_DONE (or an error) ended it. */
export class TcDumpReader {
  readonly entries: TcEntry[] = [];
  done = false;
  /** The kernel's error (a negative errno) when it refused the dump. */
  error: number | undefined;
  private pending = new Uint8Array(0);

  constructor(private readonly seq: number) {}

  push(bytes: Uint8Array): void {
    const all = new Uint8Array(this.pending.length + bytes.length);
    all.set(this.pending);
    all.set(bytes, this.pending.length);
    const v = new DataView(all.buffer);
    let at = 0;
    while (!this.done && at + NLMSG_HDRLEN <= all.length) {
      const len = v.getUint32(at, true);
      if (len < NLMSG_HDRLEN || len > NLMSG_MAX) throw new Error(`netlink message of ${len} bytes: not a traffic-control dump`);
      if (at + len > all.length) break;
      const type = v.getUint16(at + 4, true);
      const seq = v.getUint32(at + 8, true);
      const body = all.subarray(at + NLMSG_HDRLEN, at + len);
      at += align4(len);
      if (seq !== this.seq) continue;
      if (type === NLMSG_DONE) this.done = true;
      else if (type === NLMSG_ERROR) {
        const err = u32(body) ?? 0;
        // An error of 0 is an acknowledgement; a dump ends with DONE, not with it.
        if (err !== 0) {
          this.error = err | 0;
          this.done = true;
        }
      } else if (type === RTM_NEWQDISC || type === RTM_NEWTCLASS) {
        const e = entry(type, body);
        if (e) this.entries.push(e);
      }
    }
    this.pending = all.slice(Math.min(at, all.length));
  }
}

/** TC_H_ROOT: a root qdisc's parent. */
const TC_H_ROOT = 0xffffffff;

/** The interface's root qdisc among a dump's. */
export function rootQdisc(ifindex: number, qdiscs: readonly TcEntry[]): TcEntry | undefined {
  return qdiscs.find((q) => q.ifindex === ifindex && q.parent === TC_H_ROOT);
}

/**
 * The rate an interface is shaped to, from its root qdisc and classes: a root tbf's rate, or a root htb's widest
 * top-level class ceiling (what traffic may borrow up to); undefined when the root shapes nothing.
 */
export function shapedRate(ifindex: number, qdiscs: readonly TcEntry[], classes: readonly TcEntry[]): { kind: string; rate_bps: number } | undefined {
  const root = rootQdisc(ifindex, qdiscs);
  if (!root) return undefined;
  if (root.kind === "tbf" && root.rate_bps !== undefined) return { kind: "tbf", rate_bps: root.rate_bps };
  if (root.kind === "htb") {
    // The kernel names a top-level class's parent TC_H_ROOT, not the qdisc's handle.
    const top = classes.filter((c) => c.ifindex === ifindex && c.kind === "htb" && (c.parent === TC_H_ROOT || c.parent === root.handle));
    const ceil = Math.max(0, ...top.map((c) => c.ceil_bps ?? c.rate_bps ?? 0));
    if (ceil > 0) return { kind: "htb", rate_bps: ceil };
  }
  return undefined;
}
