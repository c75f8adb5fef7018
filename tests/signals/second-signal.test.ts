import { expect, test } from "bun:test";
import { join } from "node:path";

/**
 * src/signals.ts: the first Ctrl+C/SIGTERM only aborts the shutdown signal (the mode winds down and reports); a
 * second one exits at once with 128 + signal, even when winding down hangs. A child stands in for such a mode.
 */
const SIGNALS = join(import.meta.dir, "..", "..", "src", "signals.ts");

for (const [name, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  test(`${name} twice: the first aborts, the second exits ${code} while the run still winds down`, async () => {
    const script = `import { shutdownSignal, interruptedExitCode } from ${JSON.stringify(SIGNALS)};
      const s = shutdownSignal();
      s.addEventListener("abort", () => console.log("aborted " + s.reason + " " + interruptedExitCode(s)));
      console.log("ready");
      setInterval(() => {}, 1000); // winding down that never ends`;
    const p = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe" });
    const reader = p.stdout.getReader();
    let out = "";
    const until = async (text: string) => {
      while (!out.includes(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
    };
    await until("ready");
    p.kill(name);
    await until("aborted");
    expect(out).toContain(`aborted ${name} ${code}`);
    // The first signal did not end it.
    await Bun.sleep(200);
    expect(p.exitCode).toBeNull();
    const t0 = performance.now();
    p.kill(name);
    expect(await p.exited).toBe(code);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
}
