/**
 * scripts/debian-archive: which archive the system's own apt sources name for a suite, read from one-line and
 * deb822 files as apt reads them, so install-peers adds non-free and trixie's peers on the same (possibly mirrored)
 * archive.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "debian-archive");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** An apt folder (and a lists folder) holding `files`, paths relative to it. */
function aptDir(files: Record<string, string>): { apt: string; lists: string } {
  const root = mkdtempSync(join(tmpdir(), "anyperf-apt-"));
  dirs.push(root);
  const apt = join(root, "etc-apt");
  const lists = join(root, "lists");
  mkdirSync(join(apt, "sources.list.d"), { recursive: true });
  mkdirSync(lists);
  for (const [path, text] of Object.entries(files)) {
    const full = path.startsWith("lists/") ? join(root, path) : join(apt, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  return { apt, lists };
}

function archive(suite: string, d: { apt: string; lists: string }): { code: number; out: string; err: string } {
  const r = Bun.spawnSync([SCRIPT, suite, d.apt, d.lists], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

test("a one-line entry with options: its URI and signed-by keyring; comments, deb-src and other suites pass by", () => {
  const d = aptDir({
    "sources.list": [
      "# deb http://old.example/debian bookworm main",
      "deb-src http://src.example/debian bookworm main",
      "deb http://security.example/debian-security bookworm-security main",
      "deb [arch=amd64 signed-by=/usr/share/keyrings/mirror.gpg] http://mirror.example/debian bookworm main contrib # local mirror",
      "",
    ].join("\n"),
  });
  expect(archive("bookworm", d)).toEqual({ code: 0, out: "http://mirror.example/debian\t/usr/share/keyrings/mirror.gpg\n", err: "" });
});

test("deb822: the entry whose Suites list the suite, disabled ones skipped, a keyring path carried", () => {
  const d = aptDir({
    "sources.list.d/debian.sources": [
      "Types: deb",
      "URIs: http://disabled.example/debian",
      "Suites: bookworm",
      "Components: main",
      "Enabled: no",
      "",
      "Types: deb deb-src",
      "# a comment inside the paragraph",
      "URIs: http://mirror.example/debian",
      "Suites: bookworm bookworm-updates",
      "Components: main non-free-firmware",
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
      "",
      "Types: deb",
      "URIs: http://mirror.example/debian-security",
      "Suites: bookworm-security",
      "Components: main",
    ].join("\n"),
  });
  expect(archive("bookworm", d).out).toBe("http://mirror.example/debian\t/usr/share/keyrings/debian-archive-keyring.gpg\n");
  expect(archive("bookworm-security", d).out).toBe("http://mirror.example/debian-security\t\n");
});

test("a key embedded in Signed-By is left to apt (no keyring path)", () => {
  const d = aptDir({
    "sources.list.d/mirror.sources": [
      "Types: deb",
      "URIs: http://mirror.example/debian/",
      "Suites: bookworm",
      "Components: main",
      "Signed-By:",
      " -----BEGIN PGP PUBLIC KEY BLOCK-----",
      " .",
      " mQINBGPL0BUBEADmW5NdOOHwPIJlgPu6JDcKw/NZJPR8lsD3K0Bp6EHPB4TrsR+H",
      " -----END PGP PUBLIC KEY BLOCK-----",
    ].join("\n"),
  });
  expect(archive("bookworm", d).out).toBe("http://mirror.example/debian/\t\n");
});

test("of several entries naming the suite, the one whose downloaded Release says Origin: Debian", () => {
  const files = {
    "sources.list.d/a-vendor.list": "deb http://vendor.example/apt bookworm main\n",
    "sources.list.d/b-debian.list": "deb http://mirror.example:8080/debian bookworm main\n",
  };
  expect(archive("bookworm", aptDir(files)).out).toBe("http://vendor.example/apt\t\n");
  const withLists = aptDir({
    ...files,
    "lists/vendor.example_apt_dists_bookworm_InRelease": "Origin: Vendor\nSuite: bookworm\n",
    "lists/mirror.example%3a8080_debian_dists_bookworm_InRelease": "Origin: Debian\nLabel: Debian\nSuite: stable\n",
  });
  expect(archive("bookworm", withLists).out).toBe("http://mirror.example:8080/debian\t\n");
});

test("no entry for the suite: exit 1 and one line saying so", () => {
  const d = aptDir({ "sources.list": "deb http://mirror.example/debian bookworm non-free\n" });
  const r = archive("bookworm", d);
  expect(r.code).toBe(1);
  expect(r.out).toBe("");
  expect(r.err).toMatch(/^debian-archive: no enabled 'deb' entry for suite bookworm with component main in .*\n$/);
});
