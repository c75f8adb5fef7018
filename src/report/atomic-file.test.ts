import { describe, expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppendLog, appendFileAtomic, checkOutputPath, writeFileAtomic } from "./atomic-file.ts";

const MODULE = join(import.meta.dir, "atomic-file.ts");
const fresh = () => mkdtempSync(join(tmpdir(), "atomic-"));
const leftovers = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".tmp"));

/** Runs a script in its own Bun process, with this module importable as ATOMIC. */
function child(script: string, opts: { shell?: string } = {}) {
  const code = `import { AppendLog, appendFileAtomic, writeFileAtomic } from ${JSON.stringify(MODULE)};\n${script}`;
  const cmd = opts.shell === undefined ? [process.execPath, "-e", code] : ["sh", "-c", `${opts.shell}; exec "$0" -e "$1"`, process.execPath, code];
  return Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
}

describe("writeFileAtomic", () => {
  test("creates, then replaces whole, and leaves no temp file", () => {
    const dir = fresh();
    const f = join(dir, "r.json");
    writeFileAtomic(f, "first");
    expect(readFileSync(f, "utf8")).toBe("first");
    writeFileAtomic(f, new TextEncoder().encode("second, longer"));
    expect(readFileSync(f, "utf8")).toBe("second, longer");
    expect(leftovers(dir)).toEqual([]);
  });

  test("concurrent writers in separate processes: every read sees one writer's complete file", async () => {
    const dir = fresh();
    const f = join(dir, "shared.txt");
    const SIZE = 200_000;
    writeFileAtomic(f, "0".repeat(SIZE));
    const writers = [1, 2, 3].map((id) => child(`for (let i = 0; i < 150; i++) writeFileAtomic(${JSON.stringify(f)}, "${id}".repeat(${SIZE}));`));
    const done = Promise.all(writers.map((w) => w.exited));
    let finished = false;
    void done.then(() => (finished = true));
    let reads = 0;
    while (!finished) {
      const text = readFileSync(f, "utf8");
      expect(text.length).toBe(SIZE);
      expect(text).toBe(text[0]!.repeat(SIZE));
      reads++;
      await Bun.sleep(0);
    }
    expect(await done).toEqual([0, 0, 0]);
    expect(reads).toBeGreaterThan(5);
    expect(["1", "2", "3"]).toContain(readFileSync(f, "utf8")[0]!);
    expect(leftovers(dir)).toEqual([]);
  }, 30_000);

  test("a write that fails (file size limit) leaves the old file intact and removes its temp file", async () => {
    const dir = fresh();
    const f = join(dir, "old.txt");
    writeFileSync(f, "old content\n");
    // ulimit -f 8: 4 KiB; the process ignores SIGXFSZ so the write fails with EFBIG instead of killing it.
    const p = child(
      `process.on("SIGXFSZ", () => {});
       for (const w of [() => writeFileAtomic(${JSON.stringify(f)}, "x".repeat(100_000)), () => appendFileAtomic(${JSON.stringify(f)}, "y".repeat(100_000))]) {
         try { w(); console.log("written"); } catch (e) { console.log(e.code); }
       }`,
      { shell: "ulimit -f 8" },
    );
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    expect(out.trim().split("\n")).toEqual(["EFBIG", "EFBIG"]);
    expect(readFileSync(f, "utf8")).toBe("old content\n");
    expect(leftovers(dir)).toEqual([]);
  });

  test("a path that is not a regular file is written through, not replaced", () => {
    writeFileAtomic("/dev/null", "discarded");
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
  });

  test("a symlink to a file stays a symlink; its target gets the content", () => {
    const dir = fresh();
    const target = join(dir, "target.txt");
    const link = join(dir, "link.txt");
    writeFileSync(target, "before");
    symlinkSync(target, link);
    writeFileAtomic(link, "after");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("after");
  });
});

describe("appendFileAtomic and AppendLog", () => {
  test("appendFileAtomic keeps what the file held and the file's mode", () => {
    const dir = fresh();
    const f = join(dir, "log.txt");
    writeFileSync(f, "a\n", { mode: 0o640 });
    appendFileAtomic(f, "b\n");
    appendFileAtomic(f, "c\n");
    expect(readFileSync(f, "utf8")).toBe("a\nb\nc\n");
    expect(statSync(f).mode & 0o777).toBe(0o640);
    expect(leftovers(dir)).toEqual([]);
  });

  test("a log creates its file at once; appends of one turn are published together at the end of the turn", async () => {
    const dir = fresh();
    const f = join(dir, "server.log");
    writeFileSync(f, "earlier run\n");
    const log = new AppendLog(f, { flag: "-o" });
    log.append("line 1\n");
    log.append("line 2\n");
    expect(readFileSync(f, "utf8")).toBe("earlier run\n");
    await Promise.resolve();
    expect(readFileSync(f, "utf8")).toBe("earlier run\nline 1\nline 2\n");
    const again = new AppendLog(f, { flag: "-o", fresh: true });
    expect(readFileSync(f, "utf8")).toBe("");
    again.append("new run\n");
    again.flush();
    expect(readFileSync(f, "utf8")).toBe("new run\n");
    expect(leftovers(dir)).toEqual([]);
  });

  test("a log whose directory cannot hold it fails when opened, not at the first report", () => {
    expect(() => new AppendLog(join(fresh(), "missing-dir", "x.log"), { flag: "-o" })).toThrow(/ENOENT/);
  });

  test("two logs on one file in one process lose nothing", () => {
    const f = join(fresh(), "two.log");
    const a = new AppendLog(f, { flag: "-o" });
    const b = new AppendLog(f, { flag: "-o" });
    for (let i = 0; i < 20; i++) {
      (i % 2 ? a : b).append(`${i}\n`);
      (i % 2 ? a : b).flush();
    }
    expect(readFileSync(f, "utf8")).toBe(Array.from({ length: 20 }, (_, i) => `${i}\n`).join(""));
  });

  test("a reader of a growing log only ever sees whole blocks", async () => {
    const f = join(fresh(), "blocks.log");
    const BLOCK = 50_000;
    // Each block: a start line, filler, an end line; one flush per block, several blocks per second.
    const p = child(`const log = new AppendLog(${JSON.stringify(f)}, { flag: "-o" });
      for (let i = 0; i < 60; i++) { log.append("begin " + i + "\\n" + "z".repeat(${BLOCK}) + "\\nend " + i + "\\n"); log.flush(); }`);
    let finished = false;
    void p.exited.then(() => (finished = true));
    let seen = 0;
    while (!finished) {
      let text = "";
      try {
        text = readFileSync(f, "utf8");
      } catch {
        // not created yet
      }
      const blocks = text.split(/(?<=\n)(?=begin )/).filter(Boolean);
      blocks.forEach((b, i) => expect(b).toBe(`begin ${i}\n${"z".repeat(BLOCK)}\nend ${i}\n`));
      seen = Math.max(seen, blocks.length);
      await Bun.sleep(0);
    }
    expect(await p.exited).toBe(0);
    expect(readFileSync(f, "utf8").split("begin ").length - 1).toBe(60);
    expect(seen).toBeGreaterThan(0);
  }, 30_000);

  test("process.exit() in the same turn (a second Ctrl+C) still publishes what was appended", async () => {
    const f = join(fresh(), "exit.log");
    const p = child(`const log = new AppendLog(${JSON.stringify(f)}, { flag: "-o" }); log.append("measured\\n"); process.exit(130);`);
    expect(await p.exited).toBe(130);
    expect(readFileSync(f, "utf8")).toBe("measured\n");
  });
});

describe("checkOutputPath", () => {
  test("accepts a new or existing file, a device; leaves nothing behind", () => {
    const dir = fresh();
    writeFileSync(join(dir, "old.csv"), "kept");
    checkOutputPath("--csv", join(dir, "new.csv"));
    checkOutputPath("--csv", join(dir, "old.csv"));
    checkOutputPath("--csv", "/dev/null");
    expect(readdirSync(dir)).toEqual(["old.csv"]);
    expect(readFileSync(join(dir, "old.csv"), "utf8")).toBe("kept");
  });

  test("rejects a missing directory, a directory, a non-directory parent, an empty name: one line with flag and fix", () => {
    const dir = fresh();
    writeFileSync(join(dir, "file"), "");
    const msg = (p: string) => {
      try {
        checkOutputPath("-j", p);
      } catch (e) {
        expect((e as Error).name).toBe("UserError");
        return (e as Error).message;
      }
      throw new Error(`${p} accepted`);
    };
    expect(msg(join(dir, "no", "x.json"))).toBe(`-j ${join(dir, "no", "x.json")}: directory ${join(dir, "no")} does not exist; create it first (mkdir -p ${join(dir, "no")}) or pass a path in an existing directory`);
    expect(msg(dir)).toBe(`-j ${dir}: is a directory; pass a file name inside it`);
    expect(msg(join(dir, "file", "x"))).toMatch(/file is not a directory; pass a path in an existing directory$/);
    expect(msg("")).toBe("-j '': empty file name; pass a file name after -j");
  });
});
