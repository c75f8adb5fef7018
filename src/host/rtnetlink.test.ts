import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeTcDump, NLMSG_MAX, RTM_GETQDISC, RTM_GETTCLASS, shapedRate, TcDumpReader, type TcEntry } from "./rtnetlink.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "tests", "fixtures", "rtnetlink");

/** A capture: one kernel read per line in hex, after the line naming the tc set-up (seq 7, veth-a is ifindex 2). */
function capture(name: string): Uint8Array[] {
  const lines = readFileSync(join(FIXTURES, name), "latin1").split("\n").filter((l) => l && !l.startsWith("#"));
  return lines.map((l) => Uint8Array.from(Buffer.from(l, "hex")));
}
const whole = (reads: Uint8Array[]) => Uint8Array.from(reads.flatMap((r) => [...r]));

function read(bytes: Uint8Array, splits: number[] = []): TcDumpReader {
  const r = new TcDumpReader(7);
  let at = 0;
  for (const s of [...splits, bytes.length]) {
    r.push(bytes.subarray(at, s));
    at = s;
  }
  return r;
}

const ROOT = 0xffffffff;
const captured: Record<string, TcEntry[]> = {
  "tbf-300mbit.hex": [
    { what: "qdisc", ifindex: 1, handle: 0, parent: ROOT, kind: "noqueue", backlog_bytes: 0 },
    { what: "qdisc", ifindex: 2, handle: 0x800d0000, parent: ROOT, kind: "tbf", rate_bps: 300e6, backlog_bytes: 0 },
  ],
  "tbf-40gbit.hex": [
    { what: "qdisc", ifindex: 1, handle: 0, parent: ROOT, kind: "noqueue", backlog_bytes: 0 },
    { what: "qdisc", ifindex: 2, handle: 0x800d0000, parent: ROOT, kind: "tbf", rate_bps: 40e9, backlog_bytes: 0 },
  ],
  "htb-qdisc.hex": [
    { what: "qdisc", ifindex: 1, handle: 0, parent: ROOT, kind: "noqueue", backlog_bytes: 0 },
    { what: "qdisc", ifindex: 2, handle: 0x10000, parent: ROOT, kind: "htb", backlog_bytes: 0 },
  ],
  "htb-class.hex": [
    { what: "class", ifindex: 2, handle: 0x10010, parent: 0x10001, kind: "htb", rate_bps: 50e6, ceil_bps: 200e6 },
    { what: "class", ifindex: 2, handle: 0x10001, parent: ROOT, kind: "htb", rate_bps: 100e6, ceil_bps: 200e6 },
  ],
  "tbf-50mbit-backlog.hex": [
    { what: "qdisc", ifindex: 1, handle: 0, parent: ROOT, kind: "noqueue", backlog_bytes: 0 },
    // 490,536 bytes waiting: 78 ms at 50 Mbit/s.
    { what: "qdisc", ifindex: 2, handle: 0x80460000, parent: ROOT, kind: "tbf", rate_bps: 50e6, backlog_bytes: 490_536 },
  ],
  "noqueue.hex": [
    { what: "qdisc", ifindex: 1, handle: 0, parent: ROOT, kind: "noqueue", backlog_bytes: 0 },
    { what: "qdisc", ifindex: 2, handle: 0, parent: ROOT, kind: "noqueue", backlog_bytes: 0 },
  ],
};

describe("the traffic-control dump, captured from the kernel", () => {
  for (const [name, entries] of Object.entries(captured)) {
    test(`${name}: whole, as read, then split at every offset`, () => {
      const reads = capture(name);
      const bytes = whole(reads);
      const r = read(bytes);
      expect(r.done).toBe(true);
      expect(r.error).toBeUndefined();
      expect(r.entries).toEqual(entries);
      const asRead = new TcDumpReader(7);
      for (const x of reads) asRead.push(x);
      expect(asRead.entries).toEqual(entries);
      for (let i = 0; i <= bytes.length; i++) {
        const split = read(bytes, [i]);
        expect(split.done).toBe(true);
        expect(split.entries).toEqual(entries);
      }
    });
  }

  test("the shaped rate: a root tbf's, a root htb's widest top-level ceiling, none for noqueue or another interface", () => {
    const q = (n: string) => read(whole(capture(n))).entries;
    expect(shapedRate(2, q("tbf-300mbit.hex"), [])).toEqual({ kind: "tbf", rate_bps: 300e6 });
    expect(shapedRate(2, q("tbf-40gbit.hex"), [])).toEqual({ kind: "tbf", rate_bps: 40e9 });
    expect(shapedRate(2, q("htb-qdisc.hex"), q("htb-class.hex"))).toEqual({ kind: "htb", rate_bps: 200e6 });
    expect(shapedRate(2, q("htb-qdisc.hex"), [])).toBeUndefined();
    expect(shapedRate(2, q("noqueue.hex"), [])).toBeUndefined();
    expect(shapedRate(3, q("tbf-300mbit.hex"), [])).toBeUndefined();
  });
});

describe("the request and a bad stream", () => {
  test("RTM_GETQDISC / RTM_GETTCLASS dump of one interface: nlmsghdr + tcmsg", () => {
    expect(Buffer.from(encodeTcDump(RTM_GETQDISC, 7, 2)).toString("hex")).toBe("2400000026000103070000000000000000000000020000000000000000000000" + "00000000");
    expect(encodeTcDump(RTM_GETTCLASS, 1, 5)[4]).toBe(42);
  });
  test("another request's answer is skipped; the kernel's error ends the dump; a length past the bound is refused", () => {
    const bytes = whole(capture("tbf-300mbit.hex"));
    const other = new TcDumpReader(8);
    other.push(bytes);
    expect(other.entries).toEqual([]);
    expect(other.done).toBe(false);
    const err = new Uint8Array(36);
    const v = new DataView(err.buffer);
    v.setUint32(0, 36, true);
    v.setUint16(4, 2, true);
    v.setUint32(8, 7, true);
    v.setInt32(16, -22, true);
    const r = read(err);
    expect(r.done).toBe(true);
    expect(r.error).toBe(-22);
    v.setUint32(0, NLMSG_MAX + 1, true);
    expect(() => read(err)).toThrow("netlink message of 65537 bytes: not a traffic-control dump");
  });
});
