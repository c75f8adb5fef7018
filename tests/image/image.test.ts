/**
 * scripts/image end to end: the OCI image it builds is unpacked with umoci and run with runc as the image says
 * (user 65532), read-only root filesystem, no capabilities, host network namespace; a stock iperf3 client measures
 * against `anyperf serve` inside it. The tarballs must be loadable, which skopeo checks by reading them back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { freePorts, hasTool, spawnProc, waitBound } from "../support/processes.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "dist/anyperf");
const TOOLS = ["umoci", "runc", "skopeo", "jq", "iperf3"].every((t) => hasTool(["sh", "-c", `command -v ${t}`], /\//));
const IS_ROOT = process.getuid?.() === 0;
// Why a run is skipped, so a skip is never mistaken for a pass.
const SKIP = !existsSync(BIN) ? "dist/anyperf missing (scripts/build)" : !TOOLS ? "umoci/runc/skopeo/jq/iperf3 missing (scripts/install-peers --image)" : !IS_ROOT ? "runc needs root here" : "";
if (SKIP) console.warn(`image test skipped: ${SKIP}`);

// Free ports picked at run time: the range is also the kernel's ephemeral one.
const NATIVE_PORT = freePorts(41010, 41030, 2);
const IPERF3_PORT = NATIVE_PORT + 1;
const ID = `anyperf-image-test-${process.pid}`;

const Manifest = z.object({ config: z.object({ digest: z.string() }), layers: z.array(z.object({ digest: z.string() })).min(1) });
const Index = z.object({ manifests: z.array(z.object({ annotations: z.record(z.string(), z.string()).optional(), mediaType: z.string(), digest: z.string() })) });
const RuntimeConfig = z.looseObject({
  process: z.looseObject({ user: z.object({ uid: z.number(), gid: z.number() }), args: z.array(z.string()) }),
  root: z.looseObject({ path: z.string() }),
  linux: z.looseObject({ namespaces: z.array(z.looseObject({ type: z.string() })) }),
});

describe.skipIf(SKIP !== "")("scripts/image", () => {
  const work = mkdtempSync(join(tmpdir(), "anyperf-image-"));
  const bundle = join(work, "bundle");
  beforeAll(async () => {
    const built = await spawnProc([join(ROOT, "scripts/image")], 240_000).done;
    expect(built.stderr).toBe("");
    expect(built.code).toBe(0);
  }, 300_000);
  afterAll(() => {
    Bun.spawnSync(["runc", "delete", "-f", ID]);
    rmSync(work, { recursive: true, force: true });
  });

  test("the layout tags each architecture and latest; a multi-arch latest lists every platform", () => {
    const index = Index.parse(JSON.parse(readFileSync(join(ROOT, "dist/oci/index.json"), "utf8")));
    const tags = index.manifests.map((m) => m.annotations?.["org.opencontainers.image.ref.name"]);
    expect(tags).toContain("amd64");
    expect(tags).toContain("latest");
    const latest = index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === "latest");
    const arm = existsSync(join(ROOT, "dist/anyperf-linux-arm64"));
    expect(latest?.mediaType).toBe(arm ? "application/vnd.oci.image.index.v1+json" : "application/vnd.oci.image.manifest.v1+json");
    if (arm) {
      const blob = JSON.parse(readFileSync(join(ROOT, "dist/oci/blobs/sha256", latest!.digest.slice(7)), "utf8"));
      expect(blob.manifests.map((m: { platform: { architecture: string } }) => m.platform.architecture).sort()).toEqual(["amd64", "arm64"]);
    }
  });

  test("the tarballs read back as images (what podman load reads)", () => {
    for (const ref of ["oci-archive:dist/anyperf-image.oci.tar", "docker-archive:dist/anyperf-image-amd64.docker.tar"]) {
      const r = Bun.spawnSync(["skopeo", "--insecure-policy", "inspect", "--raw", ref], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      expect(r.stderr.toString()).toBe("");
      expect(r.exitCode).toBe(0);
      expect(r.stdout.toString()).toContain("sha256:");
    }
    const amd = Bun.spawnSync(["skopeo", "--insecure-policy", "inspect", "--config", "docker-archive:dist/anyperf-image-amd64.docker.tar"], { cwd: ROOT, stdout: "pipe" });
    const config = JSON.parse(amd.stdout.toString());
    expect(config.architecture).toBe("amd64");
    expect(config.config.User).toBe("65532:65532");
    expect(config.config.Entrypoint).toEqual(["/anyperf"]);
  });

  test("runc runs the image read-only as uid 65532 with no capabilities, and stock iperf3 measures against it", async () => {
    const unpack = Bun.spawnSync(["umoci", "unpack", "--image", join(ROOT, "dist/oci:amd64"), bundle], { stdout: "pipe", stderr: "pipe" });
    expect(unpack.exitCode).toBe(0);
    const configPath = join(bundle, "config.json");
    const raw = JSON.parse(readFileSync(configPath, "utf8"));
    const config = RuntimeConfig.parse(raw);
    expect(config.process.user).toEqual({ uid: 65532, gid: 65532 });
    expect(config.process.args).toEqual(["/anyperf", "serve"]);
    // The fleet Job's runner needs a shell in the image (deploy/kubernetes/fleet-test).
    expect(Bun.spawnSync([join(bundle, "rootfs/bin/sh"), "-c", "echo ok"], { stdout: "pipe" }).stdout.toString()).toBe("ok\n");
    // Host network (loopback only is used); everything else stays namespaced.
    raw.linux.namespaces = config.linux.namespaces.filter((n) => n.type !== "network");
    raw.root.readonly = true;
    raw.process.terminal = false;
    raw.process.capabilities = { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] };
    raw.process.args = ["/anyperf", "serve", "-p", String(NATIVE_PORT), "--iperf3", String(IPERF3_PORT), "--iperf", "off", "--netserver", "off", "--ntttcp", "off"];
    writeFileSync(configPath, JSON.stringify(raw));

    const container = spawnProc(["runc", "run", "--bundle", bundle, ID], 60_000);
    try {
      await waitBound(IPERF3_PORT, "tcp", 20_000);
      const client = await spawnProc(["iperf3", "-c", "127.0.0.1", "-p", String(IPERF3_PORT), "-t", "1", "-J"], 30_000).done;
      expect(client.code).toBe(0);
      const report = JSON.parse(client.stdout);
      expect(report.end.sum_received.bytes).toBeGreaterThan(1_000_000);
      expect(container.stdout() + container.stderr()).toContain(`iperf3 on :${IPERF3_PORT}`);
      // The process in the container is not root: /proc shows the uid the image asked for.
      const state = JSON.parse(Bun.spawnSync(["runc", "state", ID], { stdout: "pipe" }).stdout.toString());
      const status = readFileSync(`/proc/${state.pid}/status`, "utf8");
      expect(status).toMatch(/^Uid:\s+65532\s/m);
      expect(status).toMatch(/^CapEff:\s+0+$/m);
    } finally {
      Bun.spawnSync(["runc", "kill", ID, "TERM"]);
      await container.done;
    }
  }, 90_000);
});
