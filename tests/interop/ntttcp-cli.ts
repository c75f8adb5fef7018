/**
 * Runs `anyperf ntttcp <args>` in its own process for the interop tests, exactly as main.ts would dispatch it
 * (one-line UserError on stderr, its exit code). Kept beside the tests so they do not depend on main.ts wiring.
 */
import { main } from "../../compat/ntttcp/main.ts";
import { UserError } from "../../src/errors.ts";

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UserError)) throw e;
  console.error(`anyperf: ${e.message}`);
  process.exitCode = e.exitCode;
}
// Data Workers are unref'd but the shared pool may hold timers; a finished run exits now.
process.exit();
