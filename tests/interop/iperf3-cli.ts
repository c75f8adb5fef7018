/**
 * Runs `anyperf iperf3 <args>` in its own process for the interop tests, the way main.ts dispatches it, so the
 * tests do not depend on main.ts wiring.
 */
import { main } from "../../compat/iperf3/main.ts";

process.exitCode = await main(process.argv.slice(2));
// Shared Workers do not keep a finished client alive, but a stray timer must not either.
process.exit();
