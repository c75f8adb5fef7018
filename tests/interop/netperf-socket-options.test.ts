import { describe, expect, test } from "bun:test";
import { freePorts } from "../support/processes.ts";
import { peerSocketInts } from "../support/peer-socket.ts";
import { finish, hasStockNetperf, netserverPair, oursNetperf, sleep, stockNetperf, type Proc } from "./netperf-harness.ts";

/**
 * Socket options of netperf's data connection, read back from the kernel. -S (SO_KEEPALIVE, asked of the
 * netserver too), read off the process's own descriptors (tests/support/peer-socket.ts): stock netperf against `anyperf netserver` (TCP_RR and TCP_MAERTS: the server's data socket), and
 * `anyperf netperf` against stock netserver (TCP_RR: our data socket). `-- -G` (TCP_MAXSEG on netperf's own data
 * socket): the segment size ss shows on ours is stock's under the same option. Before, ours left both off.
 * Ports 37400-37449.
 */

const available = hasStockNetperf() && Bun.spawnSync(["ss", "-V"]).exitCode === 0;
const LIMIT_MS = 40_000;
const SOL_SOCKET = 1;
const SO_KEEPALIVE = 9;
const BASE = available ? freePorts(37400, 37450, 2) : 0;
const [STOCK, OURS] = [BASE, BASE + 1];

const servers = netserverPair(STOCK, OURS, available);

/** The established TCP sockets of `pid` other than the control connection on `controlPort`, as ss prints them. */
function dataSockets(pid: number, controlPort: number): string[] {
  const out = Bun.spawnSync(["ss", "-tnpoiOH", "state", "established"]).stdout.toString();
  return out.split("\n").filter((l) => l.includes(`pid=${pid},`) && !new RegExp(`:${controlPort}\\s`).test(l));
}

/**
 * SO_KEEPALIVE of `pid`'s data sockets (its connections other than the control one on `controlPort`), read off its
 * own descriptors during `run`. ss shows keepalive only while no retransmission is pending, which a bulk sender
 * (TCP_MAERTS) seldom is: it missed it in 1 run of 10 against the netserver that had it set.
 */
async function keepAlive(run: Proc, pid: number, controlPort: number): Promise<number[]> {
  let values: number[] = [];
  // The data phase starts after the process (ours from source) is up; look through the 4 s test's middle.
  for (let i = 0; i < 12 && values.length === 0; i++) {
    await sleep(250);
    values = await peerSocketInts(pid, (local, remote) => local !== controlPort && remote !== controlPort, SOL_SOCKET, SO_KEEPALIVE);
  }
  await finish(run, LIMIT_MS);
  return values;
}

describe.skipIf(!available)("netperf -S: SO_KEEPALIVE on the data socket, read back", () => {
  for (const t of ["TCP_RR", "TCP_MAERTS"]) {
    test(`stock netperf -t ${t} against anyperf netserver: on with -S, off without`, async () => {
      for (const keep of [true, false]) {
        await sleep(keep ? 0 : 200);
        const run = stockNetperf(["-H", "127.0.0.1", "-p", String(OURS), "-l", "4", "-P", "0", "-t", t, ...(keep ? ["-S"] : [])]);
        await sleep(1000);
        expect({ keep, values: await keepAlive(run, servers.ours().pid, OURS) }).toEqual({ keep, values: [keep ? 1 : 0] });
      }
    }, 2 * LIMIT_MS);
  }

  test("anyperf netperf -S -t TCP_RR against stock netserver: on with -S, off without", async () => {
    for (const keep of [true, false]) {
      const run = oursNetperf(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "4", "-P", "0", "-t", "TCP_RR", ...(keep ? ["-S"] : [])]);
      await sleep(1000);
      expect({ keep, values: await keepAlive(run, run.pid, STOCK) }).toEqual({ keep, values: [keep ? 1 : 0] });
    }
  }, 2 * LIMIT_MS);
});

describe.skipIf(!available)("netperf -- -G: TCP_MAXSEG on the client's data socket, read back", () => {
  /** The segment size ss shows on the data socket of a client run with `opts`, looked at during its 3 s test. */
  async function mss(run: (args: string[]) => Proc, opts: string[]): Promise<string | undefined> {
    const p = run(["-H", "127.0.0.1", "-p", String(STOCK), "-l", "3", "-P", "0", "-t", "TCP_STREAM", "--", ...opts]);
    let seen: string | undefined;
    for (let i = 0; i < 40 && seen === undefined; i++) {
      await sleep(100);
      seen = dataSockets(p.pid, STOCK).map((l) => /\bmss:(\d+)/.exec(l)?.[1]).find((m) => m !== undefined);
    }
    await finish(p, LIMIT_MS);
    return seen;
  }

  test("anyperf netperf -- -G 1000 has stock netperf's segment size; without it, the loopback's", async () => {
    const stock = await mss(stockNetperf, ["-G", "1000"]);
    const ours = await mss(oursNetperf, ["-G", "1000"]);
    const plain = await mss(oursNetperf, []);
    // 1000 less the 12 bytes of TCP timestamps on loopback: 988.
    expect({ stock: stock !== undefined, ours, plainDiffers: plain !== undefined && plain !== stock }).toEqual({ stock: true, ours: stock, plainDiffers: true });
  }, 3 * LIMIT_MS);
});
