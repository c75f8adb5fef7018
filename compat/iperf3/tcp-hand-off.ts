/**
 * A TCP data connection the main thread connected (client) or accepted (server), taken for one stream the way both
 * ends of iperf3 set it up: the socket leaves the main thread, -C is set on it as 3.12 sets it on each data socket,
 * and the readings iperf3 reports (local address, congestion control, buffer sizes) are taken on a main-thread
 * duplicate, which the caller owns (a sender's goes to the Test for TCP_INFO at its cuts).
 */
import type { Adopt } from "../../src/net/hand-off.ts";
import type { TcpSocket } from "../../src/net/types.ts";
import type { TestParams } from "../../interop/iperf3/params.ts";
import type { SockBufInfo } from "./json-report.ts";
import type { FdTools } from "./fd-tools.ts";

export interface HandedTcp {
  /** For the stream's spec (adoptedTcpSpec). */
  handed: Adopt;
  /** Main-thread duplicate for readings; undefined on the local hand-off path. */
  info: number | undefined;
  /** The socket's own address; the runtime's view of it where the duplicate cannot tell. */
  local: { host: string | undefined; port: number };
  congestion: string | undefined;
  sockBuf: SockBufInfo;
}

/** Takes `s` for a stream; a -C the kernel refuses closes what was taken and throws (IESETCONGESTION). */
export function handTcp(fd: FdTools, s: TcpSocket<unknown>, p: TestParams): HandedTcp {
  const fallback = { host: s.localAddress, port: s.localPort ?? 0 };
  const handed = fd.detach(s);
  const info = handed.info;
  if (p.congestion) {
    try {
      fd.setCongestion(info, p.congestion);
    } catch (e) {
      if (info !== undefined) fd.close(info);
      if (!handed.local) fd.close(handed.fd);
      throw e;
    }
  }
  const read = <T>(f: (fd: number) => T | undefined) => (info !== undefined ? f(info) : undefined);
  return {
    handed,
    info,
    local: read((i) => fd.localAddress(i)) ?? fallback,
    congestion: read((i) => fd.congestion(i)),
    sockBuf: { sockBufsize: p.window, sndbufActual: read((i) => fd.sndbuf(i)) ?? 0, rcvbufActual: read((i) => fd.rcvbuf(i)) ?? 0 },
  };
}
