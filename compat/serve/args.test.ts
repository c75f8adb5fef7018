import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "../../src/errors.ts";
import { parseServeArgs } from "./args.ts";

const parse = (argv: string[]) => {
  const c = parseServeArgs(argv, 5300, 1000);
  if (c.kind !== "run") throw new Error("help");
  return c.plan;
};
const fails = (argv: string[]) => {
  try {
    parse(argv);
  } catch (e) {
    if (e instanceof UserError) return e.message;
    throw e;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
};

describe("anyperf serve's command line", () => {
  test("no options: every server on its peer's default port, iperf and ntttcp sharing 5001", () => {
    expect(parse([])).toEqual({ port: 5300, iperf3: 5201, iperf: 5001, netserver: 12865, ntttcp: 5001 });
  });
  test("PORT moves a server, off turns it off, -B binds all", () => {
    expect(parse(["-p", "6000", "--iperf3", "off", "--iperf", "7001", "--ntttcp", "off", "--netserver", "12866", "-B", "::1"])).toEqual({
      port: 6000,
      iperf3: null,
      iperf: 7001,
      netserver: 12866,
      ntttcp: null,
      bind: "::1",
    });
  });
  test("--token-file reads the first line", () => {
    const f = join(mkdtempSync(join(tmpdir(), "serve-")), "token");
    writeFileSync(f, "s3cret\nignored\n");
    expect(parse(["--token-file", f]).token).toBe("s3cret");
  });
  test("mistakes name their flag", () => {
    expect(fails(["--iperf3", "70000"])).toBe("--iperf3 70000: pass a port 1-65535 or off");
    expect(fails(["-p", "off"])).toContain("-p off");
    expect(fails(["--token", "a", "--token-file", "b"])).toContain("--token and --token-file");
    expect(fails(["--ntttcp", "65000"])).toContain("--ntttcp 65000");
    // ntttcp's sync port (PORT-1) is iperf3's port here.
    expect(fails(["--ntttcp", "5202"])).toBe("port 5201 is asked for by iperf3 (--iperf3) and ntttcp (--ntttcp): pass another port to one of them");
  });
});
