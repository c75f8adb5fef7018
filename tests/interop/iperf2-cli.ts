/**
 * Runs `anyperf iperf <args>` in its own process for the interop tests, as main.ts dispatches it (one-line
 * UserError on stderr with its exit code). Kept beside the tests so they do not depend on main.ts wiring.
 */
import { main } from "../../compat/iperf2/main.ts";
import { UserError } from "../../src/errors.ts";

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UserError)) throw e;
  console.error(`anyperf: ${e.message}`);
  process.exitCode = e.exitCode;
}
