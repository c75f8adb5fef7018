/** Fuzzing the ntttcp sync codecs and state machines, both dialects (targets in ntttcp.targets.ts). */
import { fuzzSuite } from "./runner.ts";
import { targets } from "./ntttcp.targets.ts";

fuzzSuite(new URL("./ntttcp.targets.ts", import.meta.url), targets);
