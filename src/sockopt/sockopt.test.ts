import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { readFileSync } from "node:fs";
import { allowedOf, cpuList } from "../../tests/support/cpus.ts";
import { UserError } from "../errors.ts";
import {
  IP_MTU_DISCOVER,
  IP_PMTUDISC_DO,
  IP_TOS,
  IPPROTO_IP,
  IPPROTO_IPV6,
  IPPROTO_TCP,
  IPV6_TCLASS,
  SO_RCVBUF,
  SO_SNDBUF,
  SOL_SOCKET,
  TCP_MAXSEG,
  TCP_NODELAY,
  TCP_QUICKACK,
  TCP_NOTSENT_LOWAT,
  TcpState,
} from "./constants.ts";
import { SyscallError } from "./errno.ts";
import { loadSockopt, type Sockopt } from "./sockopt.ts";

const so = (await loadSockopt()) as Sockopt;
const live = process.platform === "linux" && so !== undefined;

interface Conn {
  listener: TCPSocketListener<undefined>;
  client: Socket<undefined>;
  server: Socket<undefined>;
  received: () => number;
  close(): void;
}

/** A loopback connection between two Bun sockets; the server counts what it receives. */
async function loopback(hostname = "127.0.0.1"): Promise<Conn> {
  let rx = 0;
  const accepted = Promise.withResolvers<Socket<undefined>>();
  const listener = Bun.listen({
    hostname,
    port: 0,
    socket: { open: (s) => accepted.resolve(s), data: (_s, d) => void (rx += d.byteLength) },
  });
  const client = await Bun.connect({ hostname, port: listener.port, socket: { data() {} } });
  const server = await accepted.promise;
  return {
    listener,
    client,
    server,
    received: () => rx,
    close() {
      client.end();
      listener.stop(true);
    },
  };
}

/** Bun sockets, listeners and UDP sockets all expose `fd` (runtime notes C1), but bun-types does not declare it. */
function fdOf(s: object): number {
  return (s as { fd: number }).fd;
}

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error("timed out waiting");
    await Bun.sleep(2);
  }
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("did not throw");
}

describe.skipIf(!live)("Sockopt on live loopback sockets", () => {
  let c: Conn;
  beforeAll(async () => {
    c = await loopback();
  });
  afterAll(() => c.close());

  test("SO_SNDBUF set and read back on a Bun socket (the kernel doubles it)", () => {
    so.setInt(fdOf(c.client), SOL_SOCKET, SO_SNDBUF, 300_000);
    expect(so.getInt(fdOf(c.client), SOL_SOCKET, SO_SNDBUF)).toBe(600_000);
    expect(so.apply(fdOf(c.client), { sendBuffer: 400_000, recvBuffer: 500_000 })).toEqual({ sendBuffer: 800_000, recvBuffer: 1_000_000 });
    expect(so.getInt(fdOf(c.client), SOL_SOCKET, SO_RCVBUF)).toBe(1_000_000);
  });

  test("TCP_CONGESTION set to another available algorithm and read back", () => {
    const available = readFileSync("/proc/sys/net/ipv4/tcp_available_congestion_control", "latin1").trim().split(/\s+/);
    expect(so.availableCongestionControls()).toEqual(available);
    const before = so.congestionControl(fdOf(c.client));
    expect(available).toContain(before ?? "(none)");
    const other = available.find((a) => a !== before) ?? before!;
    expect(so.apply(fdOf(c.client), { congestion: other })).toEqual({ congestion: other });
    expect(so.congestionControl(fdOf(c.client))).toBe(other);
  });

  test("an unknown congestion control is a UserError naming value, errno and the choices", () => {
    const e = thrown(() => so.apply(fdOf(c.client), { congestion: "nosuchcc" }));
    expect(e).toBeInstanceOf(UserError);
    const available = readFileSync("/proc/sys/net/ipv4/tcp_available_congestion_control", "latin1").trim().split(/\s+/).join(" ");
    expect((e as Error).message).toBe(`congestion control "nosuchcc" refused by the kernel (ENOENT): pick one of ${available}`);
  });

  test("TCP_NODELAY, TOS and pacing rate round trip (u32 and u64 pacing)", () => {
    expect(so.apply(fdOf(c.client), { noDelay: false, tos: 0x10, pacingRate: 1_000_000 })).toEqual({ noDelay: false, tos: 0x10, pacingRate: 1_000_000 });
    expect(so.getInt(fdOf(c.client), IPPROTO_TCP, TCP_NODELAY)).toBe(0);
    expect(so.getInt(fdOf(c.client), IPPROTO_IP, IP_TOS)).toBe(0x10);
    expect(so.apply(fdOf(c.client), { noDelay: true, pacingRate: 5_000_000_000 })).toEqual({ noDelay: true, pacingRate: 5_000_000_000 });
  });

  test("TCP_QUICKACK reads back on after it is set (bounceback replies re-arm it)", () => {
    expect(so.apply(fdOf(c.client), { quickAck: true })).toEqual({ quickAck: true });
    expect(so.getInt(fdOf(c.client), IPPROTO_TCP, TCP_QUICKACK)).toBe(1);
  });

  test("TCP_NOTSENT_LOWAT reads back what was set (iperf 2.2's --tcp-write-prefetch)", () => {
    expect(so.apply(fdOf(c.client), { notSentLowat: 16_384 })).toEqual({ notSentLowat: 16_384 });
    expect(so.getInt(fdOf(c.client), IPPROTO_TCP, TCP_NOTSENT_LOWAT)).toBe(16_384);
  });

  test("MSS on a connected socket is refused as a programming error (it would change nothing)", () => {
    expect(() => so.apply(fdOf(c.client), { mss: 1000 })).toThrow(/before connect/);
  });

  test("TCP_INFO after sending data: bytes acked and received cover what was sent, rtt > 0", async () => {
    const chunk = new Uint8Array(256 * 1024).fill(7);
    const want = c.received() + 4 * chunk.length;
    let sent = 0;
    while (sent < 4 * chunk.length) {
      const n = c.client.write(chunk, 0, Math.min(chunk.length, 4 * chunk.length - sent));
      if (n > 0) sent += n;
      else await Bun.sleep(1);
    }
    await until(() => c.received() >= want);
    await until(() => (so.tcpInfo(fdOf(c.client))?.unacked ?? 1) === 0);
    const tx = so.tcpInfo(fdOf(c.client))!;
    const rx = so.tcpInfo(fdOf(c.server))!;
    expect(tx.state).toBe(TcpState.ESTABLISHED);
    expect(tx.bytes_acked).toBeGreaterThanOrEqual(sent);
    expect(tx.bytes_sent).toBeGreaterThanOrEqual(sent);
    expect(rx.bytes_received).toBeGreaterThanOrEqual(sent);
    expect(tx.rtt_us).toBeGreaterThan(0);
    expect(tx.min_rtt).toBeGreaterThan(0);
    expect(tx.snd_cwnd).toBeGreaterThan(0);
    expect(tx.snd_mss).toBeGreaterThan(0);
    expect(tx.segs_out).toBeGreaterThan(0);
    expect(rx.segs_in).toBeGreaterThan(0);
  });

  test("dup gives a second fd on the same socket; closing it leaves the original working", async () => {
    const d = so.dup(fdOf(c.client));
    expect(d).not.toBe(fdOf(c.client));
    so.setInt(d, SOL_SOCKET, SO_SNDBUF, 123_000);
    expect(so.getInt(fdOf(c.client), SOL_SOCKET, SO_SNDBUF)).toBe(246_000);
    expect(so.tcpInfo(d)?.bytes_acked).toBe(so.tcpInfo(fdOf(c.client))?.bytes_acked);
    so.close(d);
    const e = thrown(() => so.close(d));
    expect(e).toBeInstanceOf(SyscallError);
    expect((e as SyscallError).code).toBe("EBADF");
    const before = c.received();
    expect(c.client.write("after dup")).toBe(9);
    await until(() => c.received() === before + 9);
  });

  test("options that only TCP takes are refused on UDP with a UserError", async () => {
    const u = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    try {
      expect(() => so.apply(fdOf(u), { noDelay: true })).toThrow(new UserError("TCP_NODELAY applies to TCP sockets only: remove it for UDP tests"));
      expect(so.apply(fdOf(u), { recvBuffer: 1 << 20 }).recvBuffer).toBe(2 << 20);
      expect(so.tcpInfo(fdOf(u))).toBeUndefined();
      expect(so.congestionControl(fdOf(u))).toBeUndefined();
    } finally {
      u.close();
    }
  });

  test("lastArrival: nothing before a datagram was read; then the kernel's stamp, before our callback ran", async () => {
    const stamps: (number | undefined)[] = [];
    const called: number[] = [];
    const u = await Bun.udpSocket({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data() {
          called.push((performance.timeOrigin + performance.now()) / 1000);
          stamps.push(so.lastArrival(fdOf(u)));
        },
      },
    });
    const tx = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    try {
      expect(so.lastArrival(fdOf(u))).toBeUndefined();
      const sent = (performance.timeOrigin + performance.now()) / 1000;
      tx.send(new Uint8Array(8), u.port, "127.0.0.1");
      await until(() => stamps.length === 1);
      expect(stamps[0]).toBeGreaterThanOrEqual(sent - 0.001);
      expect(stamps[0]).toBeLessThanOrEqual(called[0]! + 0.001);
    } finally {
      u.close();
      tx.close();
    }
  });

  test("dontFragment sets IP_MTU_DISCOVER to IP_PMTUDISC_DO on an IPv4 UDP socket, read back", async () => {
    const u = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    try {
      expect(so.getInt(fdOf(u), IPPROTO_IP, IP_MTU_DISCOVER)).not.toBe(IP_PMTUDISC_DO);
      expect(so.apply(fdOf(u), { dontFragment: true }).dontFragment).toBe(true);
      expect(so.getInt(fdOf(u), IPPROTO_IP, IP_MTU_DISCOVER)).toBe(IP_PMTUDISC_DO);
    } finally {
      u.close();
    }
  });

  test("listenBacklog raises the backlog Bun fixes at 512 (TCP_INFO of a listener reports it)", () => {
    expect(so.tcpInfo(fdOf(c.listener))?.state).toBe(TcpState.LISTEN);
    const before = so.tcpInfo(fdOf(c.listener))?.sacked;
    const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "latin1"));
    const want = Math.min(somaxconn, before === 1000 ? 1001 : 1000);
    so.listenBacklog(fdOf(c.listener), want);
    expect(so.tcpInfo(fdOf(c.listener))?.sacked).toBe(want);
  });
});

describe.skipIf(!live)("IPv6", () => {
  test("traffic class on an IPv6 socket", async () => {
    const c = await loopback("::1");
    try {
      expect(so.family(fdOf(c.client))).toBe("ipv6");
      expect(so.apply(fdOf(c.client), { tos: 0xb8 })).toEqual({ tos: 0xb8 });
      expect(so.getInt(fdOf(c.client), IPPROTO_IPV6, IPV6_TCLASS)).toBe(0xb8);
    } finally {
      c.close();
    }
  });
});

describe.skipIf(!live)("preparedTcpSocket + connectNonBlocking + Bun.connect({ fd })", () => {
  async function echoServer(hostname: string) {
    const accepted = Promise.withResolvers<Socket<undefined>>();
    const listener = Bun.listen({ hostname, port: 0, socket: { open: (s) => accepted.resolve(s), data: (s, d) => void s.write(d) } });
    return { listener, accepted: accepted.promise };
  }

  for (const [family, host] of [["ipv4", "127.0.0.1"], ["ipv6", "::1"]] as const) {
    test(`${family}: MSS and receive buffer set before connect are on the wire; the adopted socket carries data`, async () => {
      const srv = await echoServer(host);
      const fd = so.preparedTcpSocket(family, { mss: 1000, recvBuffer: 1 << 20 }, { host, port: 0 });
      try {
        expect(so.localAddress(fd)?.host).toBe(host);
        so.connectNonBlocking(fd, host, srv.listener.port);
        await so.awaitConnected(fd, { host, port: srv.listener.port });
        const echoed = Promise.withResolvers<string>();
        const s = await Bun.connect({
          fd,
          socket: { data: (_s: unknown, d: Uint8Array) => echoed.resolve(Buffer.from(d).toString()) },
        } as unknown as Parameters<typeof Bun.connect>[0]);
        expect(fdOf(s)).toBe(fd);
        // 1000 minus the 12-byte timestamp option; the loopback default would be 65483.
        expect(so.getInt(fd, IPPROTO_TCP, TCP_MAXSEG)).toBeLessThanOrEqual(1000);
        expect(so.tcpInfo(fd)?.state).toBe(TcpState.ESTABLISHED);
        const server = await srv.accepted;
        // The server learned our MSS from the SYN: its segments to us are clamped too.
        expect(so.tcpInfo(fdOf(server))!.snd_mss).toBeLessThanOrEqual(1000);
        // A 1 MiB receive buffer before the SYN means a smaller window scale than the autotuned default.
        const plain = await loopback(host);
        try {
          expect(so.tcpInfo(fd)!.rcv_wscale).toBeLessThan(so.tcpInfo(fdOf(plain.client))!.rcv_wscale!);
        } finally {
          plain.close();
        }
        s.write("ping");
        expect(await echoed.promise).toBe("ping");
        s.end();
      } finally {
        srv.listener.stop(true);
      }
    });
  }

  test("a refused connect rejects awaitConnected with the cause and the fix", async () => {
    // Bind and close to get a port that nobody listens on.
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const fd = so.preparedTcpSocket("ipv4", {});
    try {
      so.connectNonBlocking(fd, "127.0.0.1", port);
      await expect(so.awaitConnected(fd, { host: "127.0.0.1", port })).rejects.toThrow(
        new UserError(`connection to 127.0.0.1:${port} refused: start the server there first, or check host and port`),
      );
    } finally {
      so.close(fd);
    }
  });

  test("binding a local port in use names it and the fix; the socket is not leaked", () => {
    const holder = Bun.listen({ hostname: "127.0.0.1", port: 23010, socket: { data() {} } });
    try {
      const e = thrown(() => so.preparedTcpSocket("ipv4", {}, { host: "127.0.0.1", port: 23010 }));
      expect(e).toEqual(new UserError("local address 127.0.0.1:23010 in use (EADDRINUSE): pass another local port or omit it"));
    } finally {
      holder.stop(true);
    }
  });

  test("an MSS the kernel refuses is a UserError with the valid range", () => {
    const e = thrown(() => so.preparedTcpSocket("ipv4", { mss: 40000 }));
    expect(e).toEqual(new UserError("MSS 40000 refused by the kernel (EINVAL): pick a value from 88 to 32767"));
  });

  test("congestion control applied before connect survives into the connection", async () => {
    const srv = await echoServer("127.0.0.1");
    const name = so.availableCongestionControls().at(-1)!;
    const fd = so.preparedTcpSocket("ipv4", { congestion: name });
    try {
      so.connectNonBlocking(fd, "127.0.0.1", srv.listener.port);
      await so.awaitConnected(fd, { host: "127.0.0.1", port: srv.listener.port });
      expect(so.congestionControl(fd)).toBe(name);
    } finally {
      so.close(fd);
      srv.listener.stop(true);
    }
  });
});

describe.skipIf(!live)("pinThread", () => {
  const mine = live ? cpuList(allowedOf("/proc/thread-self/status")) : [];

  test.skipIf(mine.length < 2)("inside a Worker pins that thread only", async () => {
    const target = mine.at(-1)!;
    const w = new Worker(new URL("./testdata/pin-worker.ts", import.meta.url).href);
    try {
      const next = () => new Promise<{ tid?: number; pinned?: boolean; error?: string }>((r) => (w.onmessage = (e) => r(e.data)));
      const { tid } = await next();
      expect(tid).toBeGreaterThan(0);
      const status = `/proc/self/task/${tid}/status`;
      expect(cpuList(allowedOf(status))).toEqual(mine);
      w.postMessage({ cpu: target });
      expect(await next()).toEqual({ pinned: true });
      expect(allowedOf(status)).toBe(String(target));
      expect(cpuList(allowedOf("/proc/thread-self/status"))).toEqual(mine);
    } finally {
      w.terminate();
    }
  });

  test("a CPU outside the set is a UserError listing the allowed CPUs (affinity unchanged)", () => {
    const allowed = allowedOf("/proc/self/status");
    expect(() => so.pinThread(1000)).toThrow(new UserError(`cannot pin to CPU 1000 (EINVAL): pick one of ${allowed}`));
    expect(() => so.pinThread(-1)).toThrow(new UserError(`CPU -1 does not exist: pick one of ${allowed}`));
    expect(allowedOf("/proc/thread-self/status")).toBe(allowed);
  });
});
