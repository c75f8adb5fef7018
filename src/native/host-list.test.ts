import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostPorts, hostsFileEntries, readHostsFile } from "./host-list.ts";
import { parseClientArgs } from "./client-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "anyperf-hosts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe("the servers of a run", () => {
  test("a hosts file: one HOST[:PORT] a line, '#' comments and blank lines left out", () => {
    expect(hostsFileEntries("# helpers\n10.0.0.2\n\n  10.0.0.3:5301  # second\n[fd00::4]:5300\n#10.0.0.9\n")).toEqual(["10.0.0.2", "10.0.0.3:5301", "[fd00::4]:5300"]);
  });

  test("each server's port: its own, else -p's, else the default", () => {
    expect(hostPorts(["a", "b:6000", "[::1]", "[::1]:7000"], "5400", 5300).map(({ host, port }) => [host, port])).toEqual([["a", 5400], ["b", 6000], ["::1", 5400], ["::1", 7000]]);
    expect(hostPorts(["a", "b"], undefined, 5300).map((h) => h.port)).toEqual([5300, 5300]);
  });

  test("bad entries are refused in one line naming them", () => {
    expect(() => hostPorts(["a:1", "A:1"], undefined, 5300)).toThrow(/A:1 is given twice \(as A:1\): name each server once/);
    expect(() => hostPorts(["a", "b:0"], undefined, 5300)).toThrow(/b:0: not a port; pass 1-65535/);
    expect(() => hostPorts(["a", "b:x"], undefined, 5300)).toThrow(/b:x: not a port/);
    expect(() => hostPorts(["a", ":5300"], undefined, 5300)).toThrow(/':5300': no host in it/);
    expect(() => hostPorts(Array.from({ length: 257 }, (_, i) => `h${i}`), undefined, 5300)).toThrow(/257 servers given, over the 256/);
  });

  test("--hosts FILE: read, bounded, and refused when empty or missing", () => {
    expect(readHostsFile(file("two", "a\nb:1\n"))).toEqual(["a", "b:1"]);
    expect(() => readHostsFile(file("empty", "# none\n\n"))).toThrow(/no host in it/);
    expect(() => readHostsFile(join(dir, "absent"))).toThrow(/--hosts .*absent: cannot open it \(ENOENT\)/);
    expect(() => readHostsFile(file("big", "h\n".repeat(40_000)))).toThrow(/80000 bytes, over the 65536/);
  });

  test("anyperf client H1 H2 --hosts FILE: every server a target with the run's options; one stays one", () => {
    const r = parseClientArgs(["a", "b:6000", "--hosts", file("more", "c\n"), "-P", "8", "-R", "-p", "5400"]);
    expect(r.targets.map((t) => [t.host, t.port, t.direction])).toEqual([["a", 5400, "reverse"], ["b", 6000, "reverse"], ["c", 5400, "reverse"]]);
    expect(r.plan.streams).toBe(8);
    expect(r.portGiven).toBe(false);
    const one = parseClientArgs(["h:5201"]);
    expect(one.targets).toEqual([one.target]);
    expect(one.portGiven).toBe(true);
  });

  test("--responsiveness is refused with many servers; --link-speed is the tested host's link to all of them", () => {
    expect(() => parseClientArgs(["a", "b", "--responsiveness"])).toThrow(/--responsiveness applies to a run against one server/);
    expect(parseClientArgs(["a", "b", "--link-speed", "1G"]).targets.map((t) => t.linkSpeedBps)).toEqual([1e9, 1e9]);
  });
});
