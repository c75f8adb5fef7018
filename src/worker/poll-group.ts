import { EAGAIN, EPOLL_CTL_ADD, EPOLL_CTL_DEL, EPOLLIN, EPOLLOUT, type BlockingIo } from "../sockopt/blocking-io.ts";
import type { Sockopt } from "../sockopt/sockopt.ts";
import { SOL_SOCKET, SO_RCVLOWAT } from "../sockopt/constants.ts";
import { nowMs } from "./context.ts";
import { SLICE_MS, WAIT_MS, yieldThen } from "./blocking-socket.ts";

export const POLLIN = EPOLLIN;
export const POLLOUT = EPOLLOUT;

/** One connection of a bulk stream, served by the group. */
export interface GroupMember {
  readonly fd: number;
  /** What the stream waits for: POLLIN (a receiver) or POLLOUT (a sender). */
  readonly events: typeof POLLIN | typeof POLLOUT;
  /** Whether the stream does I/O now (it runs, and has reads or bytes left). */
  wants(): boolean;
  /** A receiver whose sender runs in this process: the group never raises its share for it (LAG_NICE). */
  readonly senderHere?: boolean;
  /**
   * The fd is ready (or broken): a few calls' worth of reads or writes, reads into `buf` (the group's, shared by its
   * receivers). Returns the bytes read (0 for a sender), or -1 once the connection is over: the member left the
   * group (drop), closed its fd and told its stream. It leaves before it closes, so epoll forgets the fd.
   */
  ready(buf: Uint8Array): number;
  /** The group disbands: the fd (non-blocking) goes back to the stream's event loop. */
  back(): void;
}

/** Calls one sender makes in a row before the next ready connection gets its turn. */
export const CALLS_IN_A_ROW = 8;
/**
 * Bytes one receiver reads in a row, unless it empties its socket first, before the next ready connection gets its
 * turn. Counted in bytes, not calls, so a stream read in iperf3's 128 KiB blocks gets the turn a stream read in 1 MiB
 * blocks gets: at eight 128 KiB calls a turn, iperf3 3.18's one-thread-per-stream client at -P 32 got 30 Gbit/s out
 * of our server against 35-37 from its own, every socket's queue full; at 8 MiB, 33-35, the slowest stream at 0.5-0.7
 * of the fastest's rate to the stock server's 0.8 (docs/PERFORMANCE.md "Turns"). Longer turns go faster still by
 * letting one stream run while the others wait: 38 Gbit/s with one stream at 2.5 and another at 0.25.
 */
export const TURN_BYTES = 8 << 20;

/**
 * One receiver's turn: reads of `size` into `buf` until the socket is empty (a short read saves the EAGAIN the next
 * read would get), the connection ends, `more()` says stop, or TURN_BYTES are in. `got` sees each read's bytes.
 * Returns the bytes read and the last call's result (0: the peer closed; negative: -errno; -EAGAIN when `more()`
 * stopped the turn before its first read).
 */
export function readTurn(io: BlockingIo, fd: number, buf: Uint8Array, size: number, more: () => boolean, got: (n: number) => void): { read: number; last: number } {
  let read = 0;
  let last = -EAGAIN;
  while (read < TURN_BYTES && more()) {
    last = io.recv(fd, buf, size);
    if (last <= 0) break;
    read += last;
    got(last);
    if (last < size) break;
  }
  return { read, last };
}
/** Most ready connections one epoll_wait reports; the kernel gives the next ones their turn in the next wait. */
const MAX_READY = 1024;
/**
 * A receiver whose reads come back with MARK bytes or more gets SO_RCVLOWAT MARK: epoll reports it, and the sender's
 * kernel wakes this thread for it, only once that much is queued (or the peer closed), not for every segment. A group
 * that drains its sockets and sleeps in its wait otherwise makes every arriving segment a wake-up, which the sender's
 * kernel pays for: stock iperf3 -P 32 into our server woke its Workers 31,000 times a second against the stock
 * server's 10,000, and the client, at 100 % of a core either way, sent 20 % less. A timed nap after a round of small
 * reads did less (it also held back reads the mark lets through): -P 32 and -P 128 gained another 15-25 % when it went
 * (docs/PERFORMANCE.md "Wake-ups"). Bytes under the mark would wait unseen, so a marked receiver that epoll has not
 * reported for UNMARK_MS is read as it is and loses its mark: a slowed or paced stream's intervals stay exact to
 * UNMARK_MS, and a fast one earns the mark back on its next big read.
 */
export const MARK = 64 * 1024;
export const UNMARK_MS = 10;
/**
 * The longest a marked receiver's last bytes (under MARK) wait unread once their sender stops: UNMARK_MS unreported,
 * then up to a sweep period and a wait (UNMARK_MS / 2 each). A counter that stood still for less may still move.
 */
export const UNDER_MARK_READ_MS = 2 * UNMARK_MS;

/**
 * A group whose receivers take LAG_MS or more of each round, LAG_ROUNDS rounds in a row, has fallen behind its senders,
 * and its Worker's thread asks the kernel for nice LAG_NICE (three times the CPU share of a thread at 0) until the
 * group empties. A stock server of a thread per connection gets as many shares as it has connections. Our two Workers
 * reading 32 connections of iperf3 3.18's thread-per-stream client got two against its 32, read every socket's queue
 * once in 60 ms rounds (124 MiB a round), and each byte, cold by then, cost more to take: 32-35 Gbit/s at 3.5-3.7 s
 * of server CPU, against 38-39 at 2.8 s with the share (docs/PERFORMANCE.md "Shares"). A receiver that keeps up
 * (iperf3 3.12's one-thread client: rounds of 0.02 ms) never asks, as the share would only take CPU from its sender,
 * and neither does one whose senders are this process's own (loopback: 4 % slower with it). Only from the default
 * nice (a user's own `nice` stays), and only where the process may (CAP_SYS_NICE or RLIMIT_NICE); ANYPERF_NO_NICE=1
 * turns it off, for comparison.
 */
export const LAG_MS = 10;
export const LAG_ROUNDS = 3;
export const LAG_NICE = -5;

/**
 * The connections of a Worker that holds only bulk streams (receivers, unpaced senders), served through one epoll
 * instance and recv/send on bun:ffi, reads into one buffer: a system call per read or write, as blocking mode has for
 * a stream alone on its Worker and the stock servers have (a thread or one select loop for all their streams), where
 * Bun's event loop costs a JS call and, for reads, a fresh buffer per chunk (docs/PERFORMANCE.md "Many streams").
 * epoll, not poll: a poll over 64 connections, of which one or two were ready, cost the Worker as much as copying
 * the bytes (iperf3 -P 128, docs/PERFORMANCE.md "Wake-ups"). It works in SLICE_MS slices, each wait at most WAIT_MS,
 * so the Worker's messages (stop, TCP_INFO, a new stream) keep their turn; when a stream of another kind arrives,
 * every connection goes back to the event loop (`mayRun`).
 */
export class PollGroup {
  private members: GroupMember[] = [];
  private readonly byFd = new Map<number, GroupMember>();
  /** Members in the epoll set now: those that do I/O (wants()) as of the last wait. */
  private readonly watched = new Set<GroupMember>();
  private epfd = -1;
  private readyFds = new Int32Array(16);
  private buf = new Uint8Array(0);
  private running = false;
  private readonly gone = new Set<GroupMember>();
  /** Receivers with SO_RCVLOWAT MARK → when epoll last reported them. */
  private readonly marked = new Map<GroupMember, number>();
  private sweptAt = 0;
  /** Rounds in a row whose reads took LAG_MS or more. */
  private lagging = 0;
  /**
   * Whether this thread runs at LAG_NICE now; "kept" for the Worker's life once the kernel refused, the thread ran at a
   * nice of the user's own, or ANYPERF_NO_NICE was set: none of these changes while it runs.
   */
  private share: "default" | "raised" | "kept" = "default";

  constructor(
    private readonly io: BlockingIo,
    private readonly sockopt: Sockopt,
    private readonly mayRun: () => boolean,
  ) {}

  /** Whether connections may join now: only bulk streams on this Worker. */
  get open(): boolean {
    return this.mayRun();
  }

  get size(): number {
    return this.members.length;
  }

  /** Serves `m` from the next turn on; `readBytes` is the most a receiver reads at once. */
  add(m: GroupMember, readBytes = 0): void {
    if (this.epfd < 0) {
      const fd = this.io.epollCreate();
      if (fd < 0) throw new Error(`epoll_create1 failed (errno ${-fd}): raise the open-files limit (ulimit -n)`);
      this.epfd = fd;
    }
    this.sockopt.setNonBlocking(m.fd, true);
    this.members.push(m);
    this.byFd.set(m.fd, m);
    const room = Math.min(MAX_READY, this.members.length);
    if (this.readyFds.length < room) this.readyFds = new Int32Array(room * 2);
    if (this.buf.byteLength < readBytes) this.buf = new Uint8Array(readBytes);
    if (this.running) return;
    this.running = true;
    yieldThen(this.turn);
  }

  /** Leaves the group without closing the fd (its stream stops and closes it). */
  drop(m: GroupMember): void {
    this.watch(m, false);
    this.gone.add(m);
    this.marked.delete(m);
    if (this.byFd.get(m.fd) === m) this.byFd.delete(m.fd);
    this.members = this.members.filter((x) => x !== m);
  }

  private readonly turn = (): void => {
    if (this.members.length === 0) {
      this.running = false;
      this.lower();
      return;
    }
    if (!this.mayRun()) return this.disband();
    const end = nowMs() + SLICE_MS;
    do {
      const count = this.fill();
      // Out of epoll watches (fs.epoll.max_user_watches): Bun's event loop serves them instead.
      if (count < 0) return this.disband();
      // Nobody does I/O now (their streams have not begun or are stopping): look again after a wait, not in a spin.
      if (count === 0) return void setTimeout(this.turn, WAIT_MS);
      // A marked receiver's bytes under the mark never end a wait: the wait is short enough for the sweep to find them.
      const ready = this.io.epollWait(this.epfd, this.readyFds, this.marked.size > 0 ? UNMARK_MS / 2 : WAIT_MS);
      if (ready < 0) break;
      const now = nowMs();
      let readsMs = 0;
      for (let i = 0; i < ready; i++) {
        const m = this.byFd.get(this.readyFds[i]!);
        if (!m || this.gone.has(m)) continue;
        if (m.events !== POLLIN) {
          if (m.ready(this.buf) < 0) this.gone.add(m);
          continue;
        }
        const before = nowMs();
        const n = m.ready(this.buf);
        readsMs += nowMs() - before;
        if (n < 0) this.gone.add(m);
        else if (this.marked.has(m)) this.marked.set(m, now);
        else if (n >= MARK) this.mark(m, now);
      }
      this.pace(readsMs);
      if (this.marked.size > 0 && now - this.sweptAt >= UNMARK_MS / 2) this.sweep(now);
      if (this.gone.size > 0) {
        for (const m of this.gone) this.marked.delete(m);
        this.members = this.members.filter((m) => !this.gone.has(m));
      }
      if (ready === 0) break;
    } while (nowMs() < end && this.members.length > 0);
    yieldThen(this.turn);
  };

  /** Counts a round whose reads took `readsMs`; LAG_ROUNDS slow ones in a row raise the thread's share. */
  private pace(readsMs: number): void {
    if (this.share !== "default") return;
    this.lagging = readsMs >= LAG_MS ? this.lagging + 1 : 0;
    if (this.lagging < LAG_ROUNDS || this.members.some((m) => m.senderHere)) return;
    const may = !process.env.ANYPERF_NO_NICE && this.sockopt.threadAtDefaultNice();
    this.share = may && this.sockopt.setThreadNice(LAG_NICE) ? "raised" : "kept";
  }

  /** The group empties or disbands: the thread goes back to the default share. */
  private lower(): void {
    this.lagging = 0;
    if (this.share !== "raised") return;
    this.sockopt.setThreadNice(0);
    this.share = "default";
  }

  private mark(m: GroupMember, now: number): void {
    this.sockopt.setInt(m.fd, SOL_SOCKET, SO_RCVLOWAT, MARK);
    this.marked.set(m, now);
  }

  private unmark(m: GroupMember): void {
    this.marked.delete(m);
    this.sockopt.setInt(m.fd, SOL_SOCKET, SO_RCVLOWAT, 1);
  }

  /** Marked receivers epoll has not reported for UNMARK_MS: what waits under the mark is read, and the mark goes. */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [m, at] of this.marked) {
      if (now - at < UNMARK_MS || this.gone.has(m)) continue;
      this.unmark(m);
      if (m.wants() && m.ready(this.buf) < 0) this.gone.add(m);
    }
  }

  /** Brings the epoll set to the members that do I/O now: how many do, or -1 when the kernel refused one. */
  private fill(): number {
    this.gone.clear();
    let n = 0;
    for (const m of this.members) {
      const wants = m.wants();
      if (wants) n++;
      if (!this.watch(m, wants)) return -1;
    }
    return n;
  }

  /** Whether `m` is in the epoll set as asked: false when the kernel refused to add it. */
  private watch(m: GroupMember, on: boolean): boolean {
    if (on === this.watched.has(m)) return true;
    if (on) {
      if (this.io.epollCtl(this.epfd, EPOLL_CTL_ADD, m.fd, m.events) < 0) return false;
      this.watched.add(m);
    } else {
      this.io.epollCtl(this.epfd, EPOLL_CTL_DEL, m.fd, m.events);
      this.watched.delete(m);
    }
    return true;
  }

  private disband(): void {
    const members = this.members;
    this.members = [];
    this.running = false;
    this.lower();
    this.byFd.clear();
    // The event loop must see every byte again.
    for (const m of this.marked.keys()) this.unmark(m);
    for (const m of members) {
      this.watch(m, false);
      m.back();
    }
  }
}
