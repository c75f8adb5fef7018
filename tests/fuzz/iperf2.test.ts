/** Fuzzing the iperf 2 decoders and sessions (targets in iperf2.targets.ts); budget from FUZZ_RUNS. */
import { fuzzSuite } from "./runner.ts";
import { targets } from "./iperf2.targets.ts";

fuzzSuite(new URL("./iperf2.targets.ts", import.meta.url), targets);
