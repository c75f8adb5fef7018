import { describe, expect, test } from "bun:test";
import * as net from "node:net";
import { clientsOf, ntttcpCommands, parseCapture, streamOf } from "../fixtures/ntttcp/capture.ts";
import { encodeSyncInt, SyncCommand, SyncFramer } from "../../interop/ntttcp/linux-sync-codec.ts";
import { connect, expectOk, linuxTotalBytes, sleep, spawnOurs } from "./ntttcp-harness.ts";

/**
 * The sync exchanges recorded from the real ntttcp-for-linux, replayed over real sockets against our processes:
 * a scripted sender sends exactly the bytes the real sender sent (our receiver must answer exactly what the real
 * receiver answered), and a scripted receiver answers exactly what the real receiver answered (our sender must
 * send exactly what the real sender sent). Ports 28900-28999.
 */

const words = (s: string) => s.split(/\s+/).filter(Boolean);

function drainOrClose(s: net.Socket): Promise<void> {
  return new Promise((res) => {
    const done = () => {
      s.off("drain", done);
      s.off("close", done);
      res();
    };
    s.on("drain", done);
    s.on("close", done);
  });
}

/** Reads 4-byte messages from a socket as they come. */
function reader(s: net.Socket) {
  const f = new SyncFramer();
  const got: number[] = [];
  const waiters: (() => void)[] = [];
  s.on("data", (d: Buffer) => {
    got.push(...f.push(new Uint8Array(d)));
    waiters.splice(0).forEach((w) => w());
  });
  return {
    got,
    async next(n: number, ms = 5000): Promise<number[]> {
      const until = performance.now() + ms;
      while (got.length < n && performance.now() < until) await new Promise<void>((r) => (waiters.push(r), setTimeout(r, 50)));
      return got.slice(0, n);
    },
  };
}

/** Swaps the capture's ports for ours, keeping every other word of its command. */
function withPort(argv: string[], base: number): string[] {
  return argv.map((w, i) => (argv[i - 1] === "-p" ? String(base) : w)).filter((w) => !/\.(xml|json|log)$/.test(w) && !["-x", "-j", "-O"].includes(w));
}

describe("captured sync exchanges over sockets", () => {
  for (const [name, base] of [["ntttcp-linux-sync-tcp.txt", 28901], ["ntttcp-linux-sync-warmup-E.txt", 28911]] as const) {
    const cap = parseCapture(name);
    const [client] = clientsOf(cap);
    const sent = new SyncFramer().push(streamOf(cap, client!, "client"));
    const answered = new SyncFramer().push(streamOf(cap, client!, "server"));
    const [recvArgs, sendArgs] = ntttcpCommands(cap);
    const ports = Number(recvArgs![recvArgs!.indexOf("-P") + 1]);

    test(`${name}: the real sender's bytes → our receiver answers as the real receiver did`, async () => {
      const rx = spawnOurs(withPort(recvArgs!, base));
      await sleep(700);
      const sync = await connect(base - 1);
      const r = reader(sync);
      const data: net.Socket[] = [];
      for (let i = 0; i < sent.length; i++) {
        const v = sent[i]!;
        // The real sender opens its data connections between the cycle reply and 'R'.
        if (v === SyncCommand.run) for (let p = 0; p < ports; p++) data.push(await connect(base + p));
        if (v === SyncCommand.exit) break; // 'E' is only sent at the end, below
        sync.write(encodeSyncInt(v));
        await r.next(i + 1);
      }
      // Data for the negotiated cycle plus half a second, like a real sender that outlasts the receiver.
      const buf = Buffer.alloc(131072, 0x41);
      const end = performance.now() + answered[1]! * 1000 + 500;
      await Promise.all(
        data.map(async (s) => {
          s.on("error", () => {});
          // Our receiver resets the connections when its window ends: stop at drain-or-close.
          while (performance.now() < end && !s.destroyed) {
            if (!s.write(buf)) await drainOrClose(s);
          }
        }),
      );
      if (sent.includes(SyncCommand.exit)) {
        sync.write(encodeSyncInt(SyncCommand.exit));
        await r.next(answered.length);
      }
      expect(r.got).toEqual(answered);
      for (const s of data) s.destroy();
      sync.destroy();
      const out = await rx.done;
      expectOk(out);
      expect(linuxTotalBytes(out.stdout)).toBeGreaterThan(0);
    }, 60_000);

    test(`${name}: the real receiver's answers → our sender sends what the real sender sent`, async () => {
      const servers: net.Server[] = [];
      const received: number[] = [];
      const listen = (port: number, onConn: (s: net.Socket) => void) =>
        new Promise<void>((res) => {
          const srv = net.createServer(onConn);
          servers.push(srv);
          srv.listen({ host: "127.0.0.1", port }, () => res());
        });
      let step = 0;
      await listen(base + 4, (s) => {
        const f = new SyncFramer();
        s.on("data", (d: Buffer) => {
          for (const v of f.push(new Uint8Array(d))) {
            received.push(v);
            const reply = answered[step++];
            if (reply !== undefined) s.write(encodeSyncInt(reply));
          }
        });
        s.on("error", () => {});
      });
      for (let p = 0; p < ports; p++) await listen(base + 5 + p, (s) => (s.on("data", () => {}), s.on("error", () => {})));
      const tx = await spawnOurs(withPort(sendArgs!, base + 5)).done;
      for (const srv of servers) srv.close();
      expectOk(tx);
      expect(received).toEqual(sent);
    }, 60_000);
  }
});
