/** Fuzzing the iperf3 decoders and sessions (targets in iperf3.targets.ts); budget from FUZZ_RUNS. */
import { fuzzSuite } from "./runner.ts";
import { targets } from "./iperf3.targets.ts";

fuzzSuite(new URL("./iperf3.targets.ts", import.meta.url), targets);
