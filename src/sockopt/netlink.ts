import { loadBlockingIo } from "./blocking-io.ts";
import { SOCK_CLOEXEC } from "./constants.ts";
import { loadLibc } from "./libc.ts";

const AF_NETLINK = 16;
const SOCK_RAW = 3;
const NETLINK_ROUTE = 0;
/** A traffic-control dump is a few hundred bytes per qdisc; the kernel fills up to a page or so per read. */
const READ_BYTES = 32 * 1024;

/** What reads a dump's answer (rtnetlink.ts's TcDumpReader): fed each read, done once the kernel ended the dump. */
export interface DumpSink {
  push(bytes: Uint8Array): void;
  readonly done: boolean;
}

/**
 * Sends one rtnetlink request and feeds every read to `sink` until it is done, each read bounded by `timeoutMs`
 * (SO_RCVTIMEO) and the whole exchange by the same. Returns the bytes read (tests keep them as captures), or undefined
 * where there is no libc through bun:ffi, the socket cannot be made, or the kernel stayed silent.
 */
export async function netlinkExchange(request: Uint8Array, sink: DumpSink, timeoutMs = 1000): Promise<Uint8Array[] | undefined> {
  const libc = await loadLibc();
  const io = await loadBlockingIo();
  if (!libc || !io) return undefined;
  const fd = libc.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return undefined;
  try {
    io.makeBlocking(fd, timeoutMs);
    if (io.send(fd, request, request.length) !== request.length) return undefined;
    const reads: Uint8Array[] = [];
    const buf = new Uint8Array(READ_BYTES);
    const end = performance.now() + timeoutMs;
    while (!sink.done && performance.now() < end) {
      const n = io.recv(fd, buf, buf.length);
      if (n <= 0) return undefined;
      const got = buf.slice(0, n);
      reads.push(got);
      sink.push(got);
    }
    return sink.done ? reads : undefined;
  } finally {
    io.close(fd);
  }
}
