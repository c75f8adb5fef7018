/** Fuzzing the status endpoint's inputs (targets in status.targets.ts); budget from FUZZ_RUNS. */
import { fuzzSuite } from "./runner.ts";
import { targets } from "./status.targets.ts";

fuzzSuite(new URL("./status.targets.ts", import.meta.url), targets);
