/** Fuzzing the netperf decoders and sessions (targets in netperf.targets.ts); budget from FUZZ_RUNS. */
import { fuzzSuite } from "./runner.ts";
import { targets } from "./netperf.targets.ts";

fuzzSuite(new URL("./netperf.targets.ts", import.meta.url), targets);
