/**
 * Issue 18 items 1-3 through main.ts, as a fleet runs them: --label on every output, the pod's identity from the
 * Downward API variables, tokens from a file or the environment instead of argv, and /healthz + /readyz on a real
 * `anyperf serve`. Ports 40500-40699 (free ones picked: the range is ephemeral too).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Results } from "../../src/report/result.ts";
import { StatusDocument } from "../../src/status/schema.ts";
import { freePorts, sleep, spawnProc, waitFor } from "../support/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const BUN = process.execPath;
const dir = mkdtempSync(join(tmpdir(), "anyperf-fleet-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The anyperf lines of a /metrics text that are samples, not comments. */
const samples = (text: string) => text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));

test("--label reaches --json, /status, /metrics and /results of a loopback run", async () => {
  const http = freePorts(40500, 40600, 1);
  const p = spawnProc([BUN, MAIN, "loopback", "-t", "2", "-P", "1", "--json", "--label", "node=worker-1", "--label=pair=a-b", "--http", `${http}`], 60_000);
  await waitFor(p.stderr, /status: http/);
  let metrics = "";
  let doc: StatusDocument | undefined;
  for (let i = 0; i < 40 && !metrics.includes("anyperf_bytes_total"); i++) {
    await sleep(100);
    doc = StatusDocument.parse(await (await fetch(`http://127.0.0.1:${http}/status`)).json());
    metrics = await (await fetch(`http://127.0.0.1:${http}/metrics`)).text();
  }
  expect(doc!.labels).toEqual({ node: "worker-1", pair: "a-b" });
  expect(samples(metrics).length).toBeGreaterThan(5);
  for (const line of samples(metrics)) expect(line).toMatch(/^anyperf_\w+\{node="worker-1",pair="a-b",((dialect|mode)="loopback",|version=)/);
  // The run ends, then the endpoint lingers: /results carries the same labels as stdout.
  let results: unknown;
  for (let i = 0; i < 60 && results === undefined; i++) {
    await sleep(100);
    const res = await fetch(`http://127.0.0.1:${http}/results`);
    if (res.status === 200) results = await res.json();
  }
  expect(Results.parse(results).labels).toEqual({ node: "worker-1", pair: "a-b" });
  const out = await p.done;
  expect(out.code).toBe(0);
  expect(Results.parse(JSON.parse(out.stdout)).labels).toEqual({ node: "worker-1", pair: "a-b" });
});

test("in a pod without --label: pod and node from POD_NAME and NODE_NAME; a plain run has no labels field", async () => {
  const pod = await spawnProc([BUN, MAIN, "loopback", "-t", "1", "-P", "1", "--json"], 30_000, { POD_NAME: "anyperf-x7k2p", NODE_NAME: "worker-3" }).done;
  expect(pod.code).toBe(0);
  expect(JSON.parse(pod.stdout).labels).toEqual({ pod: "anyperf-x7k2p", node: "worker-3" });
  const plain = await spawnProc([BUN, MAIN, "loopback", "-t", "1", "-P", "1", "--json"], 30_000, { POD_NAME: "", NODE_NAME: "" }).done;
  expect("labels" in JSON.parse(plain.stdout)).toBe(false);
});

test("a bad --label is one line naming the flag, exit 2, nothing run", async () => {
  const out = await spawnProc([BUN, MAIN, "iperf3", "-c", "127.0.0.1", "-p", "40699", "--label", "9x=1"]).done;
  expect(out.code).toBe(2);
  expect(out.stderr.trim().split("\n")).toEqual([`anyperf: --label 9x=1: "9x" is not a label name; use letters, digits and _ (not first a digit, not __), up to 63 characters`]);
});

test("serve: token from a file, client token from ANYPERF_TOKEN, status token from ANYPERF_HTTP_TOKEN; probes need none", async () => {
  const file = join(dir, "token");
  writeFileSync(file, "fleet-s3cret\n");
  const base = freePorts(40600, 40690, 3);
  const [native, iperf3, http] = [base, base + 1, base + 2];
  const serve = spawnProc(
    [BUN, MAIN, "serve", "-B", "127.0.0.1", "-p", `${native}`, "--iperf3", `${iperf3}`, "--iperf", "off", "--netserver", "off", "--ntttcp", "off", "--token-file", file, "--http", `${http}`, "--label", "node=a"],
    60_000,
    { ANYPERF_HTTP_TOKEN: "status-t0k" },
  );
  try {
    await waitFor(serve.stderr, /status: http/);
    // /readyz turns 200 once every listener is bound; /healthz needs no token and says nothing of tests.
    let ready = 0;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      ready = (await fetch(`http://127.0.0.1:${http}/readyz`)).status;
      if (ready !== 200) await sleep(50);
    }
    expect(ready).toBe(200);
    expect(serve.stdout()).toContain(`iperf3 on 127.0.0.1:${iperf3}`);
    expect(await (await fetch(`http://127.0.0.1:${http}/healthz`)).text()).toBe("ok\n");
    expect((await fetch(`http://127.0.0.1:${http}/status`)).status).toBe(401);
    const authed = await fetch(`http://127.0.0.1:${http}/status`, { headers: { Authorization: "Bearer status-t0k" } });
    expect(StatusDocument.parse(await authed.json()).labels).toEqual({ node: "a" });

    const refused = await spawnProc([BUN, MAIN, "client", "127.0.0.1", "-p", `${native}`, "-t", "1"], 30_000, { ANYPERF_TOKEN: "" }).done;
    expect(refused.code).not.toBe(0);
    const ok = await spawnProc([BUN, MAIN, "client", "127.0.0.1", "-p", `${native}`, "-t", "1", "--json"], 30_000, { ANYPERF_TOKEN: "fleet-s3cret" }).done;
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(Results.parse(JSON.parse(ok.stdout)).summary.bytes).toBeGreaterThan(0);
    // The token on argv keeps working.
    const argv = await spawnProc([BUN, MAIN, "client", "127.0.0.1", "-p", `${native}`, "-t", "1", "--token", "fleet-s3cret"], 30_000, { ANYPERF_TOKEN: "" }).done;
    expect(argv.code).toBe(0);
  } finally {
    serve.kill("SIGINT");
    await serve.done;
  }
}, 120_000);
