/**
 * Runs `anyperf netperf <args>` or `anyperf netserver <args>` in its own process for the interop tests, as main.ts
 * dispatches them (one-line UserError on stderr with its exit code). The first word picks the tool.
 */
import { netperfMain, netserverMain } from "../../compat/netperf/main.ts";
import { UserError } from "../../src/errors.ts";

const [tool, ...args] = process.argv.slice(2);
try {
  process.exitCode = await (tool === "netserver" ? netserverMain(args) : netperfMain(args));
} catch (e) {
  if (!(e instanceof UserError)) throw e;
  console.error(`anyperf: ${e.message}`);
  process.exitCode = e.exitCode;
}
