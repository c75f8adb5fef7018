import { afterAll, expect, test } from "bun:test";
import { WorkerPool } from "../../src/engine/worker-pool.ts";
import { loadSockopt } from "../../src/sockopt/sockopt.ts";
import { adoptingListener } from "../support/adopting-listener.ts";

/**
 * DataPlane.open's `go`: an accepted socket handed to a Worker sends from its open, with no go() (a server whose peer
 * times its first read from its request: iperf 2.2.1's -R --isochronous client waits two frame periods).
 */

afterAll(() => WorkerPool.shutdown());

const sockopt = await loadSockopt();
if (!sockopt) throw new Error("these tests need Linux glibc under Bun (socket fds for adopt)");

const LIMIT = 1 << 20;

test("a plane opened with go sends its bytes without go(); a later go() starts nothing twice", async () => {
  const listener = adoptingListener(
    sockopt,
    (fd) => ({ kind: "tcp-send", id: 0, adopt: { fd, pending: 0 }, writeSize: 64 * 1024, limitBytes: LIMIT, end: "fin-wait-eof" }),
    { go: true },
  );
  let got = 0;
  let all!: () => void;
  const read = new Promise<void>((r) => (all = r));
  const client = await Bun.connect({
    hostname: "127.0.0.1",
    port: listener.port,
    socket: {
      data: (s, d) => {
        got += d.byteLength;
        // The sender waits for our FIN once its limit is out (fin-wait-eof).
        if (got >= LIMIT) {
          s.end();
          all();
        }
      },
    },
  });
  try {
    const plane = await listener.plane;
    await read;
    plane.go();
    await plane.ended;
    expect(got).toBe(LIMIT);
    expect(plane.snapshot().streams[0]!.bytes).toBe(LIMIT);
    expect(plane.ends[0]?.reason).not.toBe("error");
  } finally {
    client.terminate();
    listener.stop(true);
  }
}, 20_000);
