/** Fuzzing anyperf's own control protocol (targets in anyperf.targets.ts); budget from FUZZ_RUNS. */
import { fuzzSuite } from "./runner.ts";
import { targets } from "./anyperf.targets.ts";

fuzzSuite(new URL("./anyperf.targets.ts", import.meta.url), targets);
