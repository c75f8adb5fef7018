import { describe, expect, test } from "bun:test";
import type { BlockingIo } from "../sockopt/blocking-io.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import { readFileSync } from "node:fs";
import { LAG_MS, LAG_NICE, LAG_ROUNDS, MARK, POLLIN, POLLOUT, PollGroup, readTurn, TURN_BYTES, UNMARK_MS, type GroupMember } from "./poll-group.ts";
import { SO_RCVLOWAT, SOL_SOCKET } from "../sockopt/constants.ts";
import { EAGAIN, EPOLL_CTL_ADD, loadBlockingIo } from "../sockopt/blocking-io.ts";
import { loadSockopt } from "../sockopt/sockopt.ts";

/** epoll over fds whose readiness the test sets (level-triggered); it records the set each wait covered. */
class FakePoll {
  readonly readyFds = new Set<number>();
  readonly nonBlocking = new Set<number>();
  /** fd → events, in the order added */
  readonly watched = new Map<number, number>();
  readonly asked: { fd: number; events: number }[][] = [];
  /** fd → its SO_RCVLOWAT as last set */
  readonly lowat = new Map<number, number>();
  /** Every nice value the group asked for, and what the fake kernel says */
  readonly nices: number[] = [];
  niceAllowed = true;
  atDefaultNice = true;

  io(): BlockingIo {
    const io: Partial<BlockingIo> = {
      epollCreate: () => 3,
      epollCtl: (_epfd, op, fd, events) => {
        if (op === EPOLL_CTL_ADD) this.watched.set(fd, events);
        else this.watched.delete(fd);
        return 0;
      },
      epollWait: (_epfd, fds) => {
        this.asked.push([...this.watched].map(([fd, ev]) => ({ fd, events: ev })));
        let n = 0;
        for (const fd of this.watched.keys()) if (this.readyFds.has(fd) && n < fds.length) fds[n++] = fd;
        return n;
      },
    };
    return io as BlockingIo;
  }

  sockopt(): Sockopt {
    return {
      setNonBlocking: (fd: number) => void this.nonBlocking.add(fd),
      setInt: (fd: number, level: number, opt: number, value: number) => {
        if (level === SOL_SOCKET && opt === SO_RCVLOWAT) this.lowat.set(fd, value);
      },
      threadAtDefaultNice: () => this.atDefaultNice,
      setThreadNice: (nice: number) => (this.nices.push(nice), this.niceAllowed),
    } as unknown as Sockopt;
  }
}

interface Member extends GroupMember {
  calls: number;
  bufBytes: number;
  back(): void;
  wentBack: boolean;
}

function member(fd: number, events: typeof POLLIN | typeof POLLOUT, opts: { wants?: () => boolean; endsAfter?: number; group?: PollGroup; reads?: number | (() => number); takesMs?: number } = {}): Member {
  const m: Member = {
    fd,
    events,
    calls: 0,
    bufBytes: 0,
    wentBack: false,
    wants: opts.wants ?? (() => true),
    ready(buf) {
      m.calls++;
      m.bufBytes = buf.byteLength;
      // a call that copies a deep queue: the thread is busy, not waiting
      for (const end = performance.now() + (opts.takesMs ?? 0); performance.now() < end; );
      const reads = typeof opts.reads === "function" ? opts.reads() : (opts.reads ?? 0);
      if (opts.endsAfter === undefined || m.calls < opts.endsAfter) return reads;
      // as a stream's member does: it leaves the group before it closes its fd
      opts.group?.drop(m);
      return -1;
    },
    back() {
      m.wentBack = true;
    },
  };
  return m;
}

const io = await loadBlockingIo();
const so = await loadSockopt();

const turns = (n = 3) => new Promise((r) => setTimeout(r, n * 5));

describe("PollGroup", () => {
  test("polls every member for what it waits on, serves the ready ones, and makes each fd non-blocking", async () => {
    const f = new FakePoll();
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    const r = member(10, POLLIN);
    const w = member(11, POLLOUT);
    group.add(r, 128 * 1024);
    group.add(w);
    f.readyFds.add(10);
    await turns();
    expect(f.asked[0]).toEqual([
      { fd: 10, events: POLLIN },
      { fd: 11, events: POLLOUT },
    ]);
    expect(r.calls).toBeGreaterThan(0);
    expect(w.calls).toBe(0);
    // the receivers' reads go into one buffer as large as the largest read asked for
    expect(r.bufBytes).toBe(128 * 1024);
    expect([...f.nonBlocking].sort()).toEqual([10, 11]);
    group.drop(r);
    group.drop(w);
  });

  test("a member whose connection ended leaves the group; the others stay", async () => {
    const f = new FakePoll();
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    const a = member(10, POLLIN, { endsAfter: 1, group });
    const b = member(11, POLLIN);
    group.add(a);
    group.add(b);
    f.readyFds.add(10).add(11);
    await turns();
    expect(a.calls).toBe(1);
    expect(b.calls).toBeGreaterThan(1);
    expect(group.size).toBe(1);
    expect(f.asked.at(-1)).toEqual([{ fd: 11, events: POLLIN }]);
    group.drop(b);
    expect(group.size).toBe(0);
  });

  test("a member that does no I/O now (not begun, stopping, its limit reached) is not polled, and an idle group does not spin", async () => {
    const f = new FakePoll();
    let on = false;
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    const a = member(10, POLLOUT, { wants: () => on });
    group.add(a);
    f.readyFds.add(10);
    await turns(10);
    expect(a.calls).toBe(0);
    expect(f.asked.length).toBe(0);
    on = true;
    await turns(10);
    expect(a.calls).toBeGreaterThan(0);
    group.drop(a);
  });

  test("a dropped member is neither polled nor served again", async () => {
    const f = new FakePoll();
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    const a = member(10, POLLIN);
    const b = member(11, POLLIN);
    group.add(a);
    group.add(b);
    f.readyFds.add(10).add(11);
    await turns();
    group.drop(a);
    const calls = a.calls;
    f.asked.length = 0;
    await turns();
    expect(a.calls).toBe(calls);
    expect(f.asked.every((call) => call.every((p) => p.fd === 11))).toBe(true);
    group.drop(b);
  });

  test("when a stream of another kind arrives, every connection goes back to the event loop", async () => {
    const f = new FakePoll();
    let bulkOnly = true;
    const group = new PollGroup(f.io(), f.sockopt(), () => bulkOnly);
    const a = member(10, POLLIN);
    const b = member(11, POLLOUT);
    group.add(a);
    group.add(b);
    await turns(1);
    bulkOnly = false;
    expect(group.open).toBe(false);
    await turns(8);
    expect(a.wentBack && b.wentBack).toBe(true);
    expect(group.size).toBe(0);
  });

  test("a receiver whose reads bring MARK bytes gets SO_RCVLOWAT MARK; smaller reads and senders none; back to the event loop, the mark goes", async () => {
    const f = new FakePoll();
    let bulkOnly = true;
    const group = new PollGroup(f.io(), f.sockopt(), () => bulkOnly);
    const big = member(10, POLLIN, { reads: MARK });
    const small = member(11, POLLIN, { reads: MARK - 1 });
    const w = member(12, POLLOUT);
    for (const m of [big, small, w]) {
      group.add(m);
      f.readyFds.add(m.fd);
    }
    await turns();
    expect([...f.lowat]).toEqual([[10, MARK]]);
    bulkOnly = false;
    await turns(8);
    expect(big.wentBack).toBe(true);
    expect([...f.lowat]).toEqual([[10, 1]]);
  });

  test("a marked receiver poll no longer reports is read as it is within UNMARK_MS, and loses its mark", async () => {
    const f = new FakePoll();
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    const a = member(10, POLLIN, { reads: () => (f.readyFds.has(10) ? MARK : 100) });
    group.add(a);
    f.readyFds.add(10);
    await turns(1);
    expect(f.lowat.get(10)).toBe(MARK);
    // the stream slows: what it sends stays under the mark, and poll stops reporting it
    f.readyFds.delete(10);
    const calls = a.calls;
    await new Promise((r) => setTimeout(r, UNMARK_MS * 4));
    expect(f.lowat.get(10)).toBe(1);
    expect(a.calls).toBe(calls + 1);
    group.drop(a);
  });
});

describe("PollGroup's share of the CPU", () => {
  /** Long enough for LAG_ROUNDS slow rounds and a few turns more. */
  const lagged = () => new Promise((r) => setTimeout(r, (LAG_ROUNDS + 4) * (LAG_MS + 2)));

  test("receivers that take LAG_MS of LAG_ROUNDS rounds in a row raise the thread's share once; the emptied group lowers it", async () => {
    const f = new FakePoll();
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    const a = member(10, POLLIN, { reads: MARK - 1, takesMs: LAG_MS + 1 });
    group.add(a);
    f.readyFds.add(10);
    await lagged();
    expect(a.calls).toBeGreaterThanOrEqual(LAG_ROUNDS);
    expect(f.nices).toEqual([LAG_NICE]);
    group.drop(a);
    await turns();
    expect(f.nices).toEqual([LAG_NICE, 0]);
  });

  /** Serves `members`, every one ready, for as long as LAG_ROUNDS slow rounds take: the nice values the group asked for. */
  async function served(members: GroupMember[]): Promise<number[]> {
    const f = new FakePoll();
    const group = new PollGroup(f.io(), f.sockopt(), () => true);
    for (const m of members) {
      group.add(m);
      f.readyFds.add(m.fd);
    }
    await lagged();
    for (const m of members) group.drop(m);
    return [...f.nices];
  }

  test("receivers that keep up, and slow senders, leave the share as it is", async () => {
    const r = member(10, POLLIN, { reads: 1000, takesMs: LAG_MS / 4 });
    expect(await served([r, member(11, POLLOUT, { takesMs: LAG_MS + 1 })])).toEqual([]);
    expect(r.calls).toBeGreaterThanOrEqual(LAG_ROUNDS);
  });

  test("a group with a receiver whose sender is this process's own never raises its share", async () => {
    const slow = () => member(10, POLLIN, { reads: MARK - 1, takesMs: LAG_MS + 1 });
    expect(await served([{ ...slow(), senderHere: true }, { ...slow(), fd: 11 }])).toEqual([]);
    // the same slow receivers without it do raise it
    expect(await served([slow(), { ...slow(), fd: 11 }])).toEqual([LAG_NICE]);
  });

  test("a share the kernel refuses is asked for once; a user's own nice and ANYPERF_NO_NICE are kept", async () => {
    for (const setUp of [(f: FakePoll) => void (f.niceAllowed = false), (f: FakePoll) => void (f.atDefaultNice = false), () => void (process.env.ANYPERF_NO_NICE = "1")]) {
      const f = new FakePoll();
      setUp(f);
      const group = new PollGroup(f.io(), f.sockopt(), () => true);
      const a = member(10, POLLIN, { reads: MARK - 1, takesMs: LAG_MS + 1 });
      group.add(a);
      f.readyFds.add(10);
      try {
        await lagged();
        await lagged();
        expect(a.calls).toBeGreaterThanOrEqual(2 * LAG_ROUNDS);
        expect(f.nices).toEqual(f.niceAllowed ? [] : [LAG_NICE]);
      } finally {
        delete process.env.ANYPERF_NO_NICE;
        group.drop(a);
      }
      await turns();
      expect(f.nices.filter((n) => n === 0)).toEqual([]);
    }
  });
});

describe.skipIf(!so)("Sockopt's thread nice", () => {
  const niceNow = () => Number(readFileSync("/proc/thread-self/stat", "latin1").split(") ")[1]!.split(" ")[16]);

  test("a raised share shows in the kernel's view of this thread, and going back to 0 is always allowed", () => {
    expect(so!.threadAtDefaultNice()).toBe(niceNow() === 0);
    if (niceNow() !== 0) return;
    const raised = so!.setThreadNice(LAG_NICE);
    try {
      // without CAP_SYS_NICE or a fitting RLIMIT_NICE the kernel refuses, and nothing changed
      expect(niceNow()).toBe(raised ? LAG_NICE : 0);
      expect(so!.threadAtDefaultNice()).toBe(!raised);
    } finally {
      expect(so!.setThreadNice(0)).toBe(true);
    }
    expect(niceNow()).toBe(0);
  });
});

describe.skipIf(!io || !so)("PollGroup on a live loopback connection", () => {
  test("a stream that slows to a trickle after big reads has its last bytes read within a few UNMARK_MS, not when a mark's worth more comes", async () => {
    let serverSide: { fd?: number; terminate(): void } | undefined;
    const accepted = Promise.withResolvers<void>();
    const listener = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: (s) => {
          serverSide = s;
          accepted.resolve();
        },
        data: () => {},
      },
    });
    const client = await Bun.connect({ hostname: "127.0.0.1", port: listener.port, socket: { data: () => {} } });
    await accepted.promise;
    const fd = so!.handOff(serverSide!)[0]!;
    let got = 0;
    const r: GroupMember = {
      fd,
      events: POLLIN,
      wants: () => true,
      ready: (buf) => {
        let read = 0;
        for (let n = io!.recv(fd, buf, buf.byteLength); n > 0; n = io!.recv(fd, buf, buf.byteLength)) read += n;
        got += read;
        return read;
      },
      back: () => {},
    };
    // Every SO_RCVLOWAT the group sets, as it sets it: a loaded machine may look only after the sweep took the mark off.
    const lowats: number[] = [];
    const spy = {
      setNonBlocking: (fd: number, on: boolean) => so!.setNonBlocking(fd, on),
      setInt: (fd: number, level: number, opt: number, value: number) => {
        if (level === SOL_SOCKET && opt === SO_RCVLOWAT) lowats.push(value);
        so!.setInt(fd, level, opt, value);
      },
      threadAtDefaultNice: () => so!.threadAtDefaultNice(),
      setThreadNice: (nice: number) => so!.setThreadNice(nice),
    } as unknown as Sockopt;
    const group = new PollGroup(io!, spy, () => true);
    group.add(r, 256 * 1024);
    const until = async (ok: () => boolean, ms: number) => {
      for (const end = performance.now() + ms; !ok() && performance.now() < end; ) await Bun.sleep(1);
    };
    try {
      client.write(new Uint8Array(4 * MARK));
      await until(() => got === 4 * MARK, 2000);
      expect(got).toBe(4 * MARK);
      expect(lowats[0]).toBe(MARK);
      client.write(new Uint8Array(100));
      const sent = performance.now();
      await until(() => got === 4 * MARK + 100, 1000);
      expect(got).toBe(4 * MARK + 100);
      expect(performance.now() - sent).toBeLessThan(UNMARK_MS * 20);
      expect(so!.getInt(fd, SOL_SOCKET, SO_RCVLOWAT)).toBe(1);
    } finally {
      group.drop(r);
      io!.close(fd);
      client.end();
      listener.stop(true);
    }
  });
});

describe("readTurn", () => {
  /** A socket whose reads return `results` in turn, then `rest` forever; it counts the calls. */
  const socket = (results: number[], rest: number) => {
    const s = { calls: 0, io: {} as BlockingIo };
    s.io = { recv: (_fd: number, _buf: Uint8Array, len: number) => Math.min(len, results[s.calls++] ?? rest) } as Partial<BlockingIo> as BlockingIo;
    return s;
  };
  const buf = new Uint8Array(128 * 1024);
  const size = buf.byteLength;

  test("a socket that never empties gives up its turn after TURN_BYTES, whatever the read size", () => {
    for (const readSize of [size, 1000]) {
      const s = socket([], readSize);
      const seen: number[] = [];
      const { read, last } = readTurn(s.io, 5, buf, readSize, () => true, (n) => seen.push(n));
      expect(read).toBe(Math.ceil(TURN_BYTES / readSize) * readSize);
      expect(s.calls).toBe(Math.ceil(TURN_BYTES / readSize));
      expect(seen.reduce((a, b) => a + b, 0)).toBe(read);
      expect(last).toBe(readSize);
    }
  });

  test("a short read ends the turn: the socket is empty and the EAGAIN a next read would get is saved", () => {
    const s = socket([size, size, 500], size);
    expect(readTurn(s.io, 5, buf, size, () => true, () => {})).toEqual({ read: 2 * size + 500, last: 500 });
    expect(s.calls).toBe(3);
  });

  test("the peer's close and an error end the turn with what was read before them", () => {
    expect(readTurn(socket([size, 0], size).io, 5, buf, size, () => true, () => {})).toEqual({ read: size, last: 0 });
    expect(readTurn(socket([size, -104], size).io, 5, buf, size, () => true, () => {})).toEqual({ read: size, last: -104 });
  });

  test("a stream that stops wanting reads (its limit reached) stops the turn; before the first read, nothing reads as closed", () => {
    const s = socket([], size);
    let left = 3;
    expect(readTurn(s.io, 5, buf, size, () => left-- > 0, () => {}).read).toBe(3 * size);
    expect(readTurn(socket([], size).io, 5, buf, size, () => false, () => {})).toEqual({ read: 0, last: -EAGAIN });
  });
});
