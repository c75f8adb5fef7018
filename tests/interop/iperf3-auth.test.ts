/**
 * iperf3 authentication in both roles against the stock peers: 3.12 (Debian bookworm) encrypts with PKCS#1 v1.5
 * only, 3.18 (trixie) with OAEP unless --use-pkcs1-padding. Keys made with openssl as iperf3's docs make them; the
 * users file holds sha256("{user}password"). Good and bad passwords, the other padding, missing key or users file,
 * each ending promptly with the stock words. Ports 36700-36799.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, spawnProc } from "../support/processes.ts";
import { iperf3Peers, type StockPeer } from "../support/stock-peers.ts";
import { ours, waitListening, type Finished, type Proc } from "./iperf3-harness.ts";
import { USERS_FILE_MAX } from "../../compat/iperf3/auth-files.ts";

const T = 120_000;
// freePorts never hands out a port twice in one process.
const port = () => freePorts(36700, 36800, 1);

let dir = "";
const key = (name: string) => join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "anyperf-iperf3-auth-"));
  for (const cmd of [
    ["openssl", "genrsa", "-out", key("private.pem"), "2048"],
    ["openssl", "rsa", "-in", key("private.pem"), "-outform", "PEM", "-pubout", "-out", key("public.pem")],
  ]) {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString()}`);
  }
  const hash = createHash("sha256").update("{mario}rossi").digest("hex");
  writeFileSync(key("users.csv"), `# iperf3 credentials\nmario,${hash}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DENIED = "iperf3: error - test authorization failed";
const clientArgs = (p: number, extra: string[] = []) => ["-c", "127.0.0.1", "-p", String(p), "-t", "1", "--username", "mario", "--rsa-public-key-path", key("public.pem"), ...extra];
const serverArgs = (p: number, extra: string[] = []) => ["-s", "-p", String(p), "--rsa-private-key-path", key("private.pem"), "--authorized-users-path", key("users.csv"), ...extra];

type Run = (args: string[], env?: Record<string, string>) => Proc;
const oursWith: Run = (args, env) => (env ? spawnProc([process.execPath, join(import.meta.dir, "iperf3-cli.ts"), ...args], 30_000, env) : ours(args));
const peerWith =
  (peer: StockPeer): Run =>
  (args, env) =>
    spawnProc([peer.command, ...args], 30_000, env);

/** Clients run one after another against one server; the server is stopped after them (or awaited with -1). */
async function session(server: Run, serverExtra: string[], clients: Array<{ run: Run; password: string; extra?: string[] }>, oneOff = false) {
  const p = port();
  const srv = server(serverArgs(p, oneOff ? [...serverExtra, "-1"] : serverExtra));
  const results: Array<Finished & { ms: number }> = [];
  try {
    await waitListening(p);
    for (const c of clients) {
      const t0 = performance.now();
      const f = await c.run(clientArgs(p, c.extra), { IPERF3_PASSWORD: c.password }).done;
      results.push({ ...f, ms: performance.now() - t0 });
    }
    if (oneOff) return { results, server: await srv.done };
  } finally {
    srv.kill();
  }
  return { results, server: await srv.done };
}

/** `anyperf serve` with only its iperf3 listener, on the port and with the login options `serverArgs` names. */
const serveWith: Run = (args) => {
  const [, , iperf3Port, ...auth] = args;
  const listeners = ["-p", String(port()), "--iperf3", iperf3Port!, "--iperf", "off", "--netserver", "off", "--ntttcp", "off"];
  return spawnProc([process.execPath, join(import.meta.dir, "../../main.ts"), "serve", ...listeners, ...auth], 30_000);
};

const [system, trixie] = iperf3Peers();

for (const peer of [system!, trixie!]) {
  const stock = peerWith(peer);
  // 3.12 knows only PKCS#1 v1.5 (and no --use-pkcs1-padding option); 3.17+ default to OAEP.
  const oldPeer = peer.version === "3.12";
  const ourPadding = oldPeer ? ["--use-pkcs1-padding"] : [];
  describe.skipIf(!peer.version)(`iperf3 authentication with ${peer.label}`, () => {
    test("stock client -> our server: the right password runs, a wrong one is refused in the stock words; -1 waits for a good login", async () => {
      const { results, server } = await session(
        oursWith,
        ourPadding,
        [
          { run: stock, password: "wrong" },
          { run: stock, password: "rossi" },
        ],
        true,
      );
      const [bad, good] = results as [Finished & { ms: number }, Finished];
      expect(bad.code).toBe(1);
      expect(bad.stdout + bad.stderr).toContain(DENIED);
      expect(bad.ms).toBeLessThan(8000);
      expect(good.code).toBe(0);
      expect(good.stdout).toContain("receiver");
      expect(server.code).toBe(0);
      expect(server.stdout + server.stderr).toContain("test authorization failed");
    }, T);

    test("stock client -> serve's iperf3 listener with the same options: the right password runs, a wrong one is refused", async () => {
      const { results, server } = await session(serveWith, ourPadding, [
        { run: stock, password: "wrong" },
        { run: stock, password: "rossi" },
      ]);
      const [bad, good] = results as [Finished & { ms: number }, Finished];
      expect(bad.code).toBe(1);
      expect(bad.stdout + bad.stderr).toContain(DENIED);
      expect(good.code, good.stdout + good.stderr).toBe(0);
      expect(good.stdout).toContain("receiver");
      expect(server.stdout).toContain("clients log in");
      expect(server.stdout + server.stderr).toContain("test authorization failed");
    }, T);

    test("our client -> stock server: the right password runs, a wrong one is refused", async () => {
      const { results } = await session(stock, [], [
        { run: oursWith, password: "rossi", extra: ourPadding },
        { run: oursWith, password: "wrong", extra: ourPadding },
      ]);
      const [good, bad] = results as [Finished, Finished & { ms: number }];
      expect(good.code).toBe(0);
      expect(good.stdout).toContain("receiver");
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(DENIED);
      expect(bad.ms).toBeLessThan(8000);
    }, T);

    test("the other padding does not decrypt, in both pairings", async () => {
      const otherPadding = oldPeer ? [] : ["--use-pkcs1-padding"];
      const toOurs = await session(oursWith, otherPadding, [{ run: stock, password: "rossi" }]);
      expect(toOurs.results[0]!.code).toBe(1);
      expect(toOurs.results[0]!.stdout + toOurs.results[0]!.stderr).toContain(DENIED);
      const toStock = await session(stock, [], [{ run: oursWith, password: "rossi", extra: otherPadding }]);
      expect(toStock.results[0]!.code).toBe(1);
      expect(toStock.results[0]!.stderr).toContain(DENIED);
    }, T);
  });
}

describe("iperf3 authentication set up wrong: refused at start in the stock words", () => {
  const CLIENT = "parameter error - you must specify a username, password, and path to a valid RSA public key";
  const SERVER = "parameter error - you must specify a path to a valid RSA private key and a user credential file";
  const cases: Array<[string, string[], Record<string, string>, string]> = [
    ["client: missing public key file", ["-c", "127.0.0.1", "--username", "mario", "--rsa-public-key-path", "/nonexistent/public.pem"], { IPERF3_PASSWORD: "rossi" }, CLIENT],
    ["client: --username without a key", ["-c", "127.0.0.1", "--username", "mario"], { IPERF3_PASSWORD: "rossi" }, CLIENT],
    ["server: missing private key file", ["-s", "--rsa-private-key-path", "/nonexistent/private.pem", "--authorized-users-path", "/etc/hostname"], {}, SERVER],
    ["server: key without users file", ["-s", "--rsa-private-key-path", "/nonexistent/private.pem"], {}, SERVER],
    ["server: unreadable users file", ["-s", "--rsa-private-key-path", "/dev/null", "--authorized-users-path", "/nonexistent/users.csv"], {}, "parameter error - cannot access authorized users file"],
    ["server: skew threshold 0", ["-s", "--time-skew-threshold", "0"], {}, "parameter error - skew threshold must be a positive number"],
  ];
  for (const [name, args, env, text] of cases) {
    test(name, async () => {
      const f = await oursWith(args, env).done;
      expect(f.code).toBe(1);
      expect(f.stderr).toContain(`iperf3: ${text}`);
    }, T);
  }

  test("serve: the login options name their listener's flag when it is off, and take serve's usage exit code", async () => {
    const f = await spawnProc([process.execPath, join(import.meta.dir, "../../main.ts"), "serve", "--iperf3", "off", ...serverArgs(0).slice(3)], 30_000).done;
    expect(f.code).toBe(2);
    expect(f.stderr).toContain("--iperf3 off turns off");
    const g = await spawnProc([process.execPath, join(import.meta.dir, "../../main.ts"), "serve", "--rsa-private-key-path", key("private.pem")], 30_000).done;
    expect(g.code).toBe(2);
    expect(g.stderr).toContain("pass both --rsa-private-key-path and --authorized-users-path");
  }, T);

  test("a users file over 1 MiB is refused before it is read, and the test with it", async () => {
    const big = key("big-users.csv");
    writeFileSync(big, `${"#".repeat(USERS_FILE_MAX)}\nmario,${createHash("sha256").update("{mario}rossi").digest("hex")}\n`);
    const p = port();
    const srv = oursWith(["-s", "-p", String(p), "-1", "--rsa-private-key-path", key("private.pem"), "--authorized-users-path", big]);
    try {
      await waitListening(p);
      const c = await oursWith(clientArgs(p, ["--use-pkcs1-padding"]), { IPERF3_PASSWORD: "rossi" }).done;
      expect(c.code).toBe(1);
      expect(c.stderr).toContain(DENIED);
    } finally {
      srv.kill();
    }
    const s = await srv.done;
    expect(s.stdout + s.stderr).toContain(`over the ${USERS_FILE_MAX}-byte bound`);
  }, T);

  test("the client without IPERF3_PASSWORD says where the password comes from", async () => {
    expect(process.env.IPERF3_PASSWORD).toBeUndefined();
    const f = await oursWith(["-c", "127.0.0.1", "--username", "mario", "--rsa-public-key-path", key("public.pem")], {}).done;
    expect(f.code).toBe(1);
    expect(f.stderr).toContain("IPERF3_PASSWORD");
  }, T);
});
