/**
 * No package registry's host is written anywhere in the repository: what installs packages takes the archive the
 * system's own package manager names (scripts/debian-archive), so a machine behind a local mirror keeps its mirror.
 * The patterns are escaped regular expressions, so this file does not match itself.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

/** Hosts of Linux distributions' archives and of language and container registries. */
const REGISTRY_HOST =
  /\b(?:[a-z0-9-]+\.)*(?:debian\.org|ubuntu\.com|alpinelinux\.org|fedoraproject\.org|centos\.org|archlinux\.org|opensuse\.org|npmjs\.(?:org|com)|yarnpkg\.com|pypi\.org|pythonhosted\.org|crates\.io|proxy\.golang\.org|sum\.golang\.org|rubygems\.org|maven\.org|maven\.apache\.org|nuget\.org|packagist\.org|jsr\.io|deno\.land|nodesource\.com|packages\.cloud\.google\.com|docker\.io|ghcr\.io|quay\.io|gcr\.io)\b/i;

function trackedFiles(): string[] {
  const r = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ls-files failed: ${r.stderr.toString()}`);
  return r.stdout.toString().split("\0").filter((f) => f !== "");
}

test("the pattern finds a registry's host in a line (so the scan below can fail)", () => {
  expect(REGISTRY_HOST.test(["deb http://deb", "debian", "org/debian bookworm main"].join("."))).toBe(true);
  expect(REGISTRY_HOST.test(["https://registry", "npmjs", "org/zod"].join("."))).toBe(true);
  expect(REGISTRY_HOST.test("URIs: http://mirror.example/debian")).toBe(false);
});

test("no tracked file names a package registry's host", () => {
  const files = trackedFiles();
  expect(files.length).toBeGreaterThan(100);
  const hits: string[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(join(ROOT, f), "latin1");
    } catch {
      continue; // listed by git but deleted in the work tree
    }
    if (text.includes("\0")) continue; // binary
    text.split("\n").forEach((line, i) => {
      const m = REGISTRY_HOST.exec(line);
      if (m) hits.push(`${f}:${i + 1}: ${m[0]}`);
    });
  }
  expect(hits).toEqual([]);
});
