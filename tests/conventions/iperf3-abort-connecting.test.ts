/**
 * Found by the argv fuzzer (issue 21 item 15): a signal while the iperf3 client is still connecting crashed with
 * "undefined is not an object (evaluating 'this.side.test')" under -J, its report not made yet. To hold the client
 * in connect, it runs in a network namespace of its own where the server's address sits behind a veth whose other
 * end answers nothing (nothing leaves the namespace).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const netns = process.platform === "linux" && Bun.spawnSync(["unshare", "-n", "true"]).exitCode === 0;

test.skipIf(!netns).each([[[]], [["-J"]]])("SIGTERM while connecting %p: no crash, iperf3's interrupt message", async (extra) => {
  // v1 has no address and the neighbour entry is fixed: the SYNs to 10.1.1.2 go nowhere and connect waits.
  const setup = [
    "ip link set lo up",
    "ip link add v0 type veth peer name v1",
    "ip addr add 10.1.1.1/24 dev v0",
    "ip link set v0 up",
    "ip link set v1 up",
    "ip neigh add 10.1.1.2 lladdr 02:00:00:00:00:02 dev v0 nud permanent",
  ].join(" && ");
  const client = [process.execPath, MAIN, "iperf3", "-c", "10.1.1.2", "-p", "36710", ...extra].join(" ");
  const p = Bun.spawn(["unshare", "-n", "bash", "-c", `${setup} && exec ${client}`], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  // The signal must find the client in connect: wait for its SYN_SENT socket (state 02 in the namespace's
  // /proc/net/tcp, which p's pid sees once bash has exec'd the client), not for a fixed time a loaded host overruns.
  const until = Date.now() + 15_000;
  const connecting = () => {
    try {
      return /^\s*\d+: \S+ 0201010A:8F66 02 /m.test(readFileSync(`/proc/${p.pid}/net/tcp`, "utf8"));
    } catch {
      return false;
    }
  };
  while (!connecting() && Date.now() < until) await Bun.sleep(50);
  expect(connecting(), "the client reached connect").toBe(true);
  p.kill("SIGTERM");
  const killer = setTimeout(() => p.kill("SIGKILL"), 5000);
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(killer);
  const all = `${out}${err}`;
  expect(all).not.toContain("TypeError");
  expect(all).not.toMatch(/Bun v\d|^\s+at .+:\d+/m);
  expect(all).toContain("interrupt - the client has terminated");
}, 30_000);
