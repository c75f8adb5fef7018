import { afterEach, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { PortMux } from "./port-mux.ts";
import { loadNet } from "./net.ts";
import type { TcpSocket } from "./types.ts";

/** Routes by the first byte: 'a…' to a, 'b…' to b; nothing yet: wait. */
const decide = (first: Uint8Array, _peer: string | undefined, timedOut: boolean) => (first.length === 0 ? (timedOut ? "drop" : "wait") : first[0] === 0x61 ? "a" : "b");

const PORT = 30950;
let mux: PortMux<"a" | "b"> | undefined;
const clients: Socket[] = [];
afterEach(() => {
  mux?.stop();
  for (const c of clients) c.destroy();
});

function client(send?: string): Promise<{ sock: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: "127.0.0.1", port: PORT }, () => {
      if (send) sock.write(send);
      resolve({ sock, closed: new Promise((r) => sock.once("close", () => r())) });
    });
    sock.on("error", reject);
    clients.push(sock);
  });
}

async function start(holdMs = 10_000) {
  mux = new PortMux<"a" | "b">(await loadNet(), decide, holdMs);
  mux.listen("127.0.0.1", PORT);
  const got: Record<"a" | "b", string[]> = { a: [], b: [] };
  for (const r of ["a", "b"] as const) {
    mux.net(r).listen<{ text: string }>({
      hostname: "ignored",
      port: 0,
      data: { text: "" },
      socket: {
        open: (s: TcpSocket<{ text: string }>) => void (s.data = { text: "" }),
        data: (s, d) => {
          s.data.text += new TextDecoder().decode(d);
          got[r].push(s.data.text);
        },
      },
    });
  }
  return got;
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await Bun.sleep(10);
};

describe("PortMux", () => {
  test("each connection reaches the server its first bytes name, bytes read before the choice included", async () => {
    const got = await start();
    await client("alpha");
    await client("bravo");
    await until(() => got.a.length > 0 && got.b.length > 0);
    expect(got.a.at(-1)).toBe("alpha");
    expect(got.b.at(-1)).toBe("bravo");
  });

  test("a silent connection waits for its first bytes", async () => {
    const got = await start();
    const c = await client();
    await Bun.sleep(100);
    expect(got.a.length + got.b.length).toBe(0);
    c.sock.write("bravo");
    await until(() => got.b.length > 0);
    expect(got.b.at(-1)).toBe("bravo");
    expect(got.a).toEqual([]);
  });

  test("a connection silent past the hold is closed, not kept", async () => {
    await start(150);
    const c = await client();
    const closed = await Promise.race([c.closed.then(() => true), Bun.sleep(2000).then(() => false)]);
    expect(closed).toBe(true);
  });

  test("a client that half-closes before sending anything is closed at once, not held", async () => {
    await start();
    const c = await client();
    c.sock.end();
    const closed = await Promise.race([c.closed.then(() => true), Bun.sleep(2000).then(() => false)]);
    expect(closed).toBe(true);
  });
});
