/**
 * Bugs the fuzz targets found in modules this suite does not own, reported to their owners. Each predicate
 * recognises exactly that bug's symptom, so a target can go on fuzzing past it; known-bugs.test.ts holds the
 * minimal failing input of each as `test.failing`. When a fix lands, that test starts failing: delete it and the
 * predicate together.
 */
import { z } from "zod";

export const KNOWN = {
  /**
   * netperf: a DO_OMNI with MEASURE_CPU and a cpu_rate float of +Infinity (0x7f800000 at offset 60) passes
   * checkOmniRequest; NetserverSession.dataBound then copies it into the OMNI_RESPONSE, whose zod schema rejects
   * Infinity, and a ZodError escapes dataBound (compat/netperf/server.ts calls it from an async bind(): rejected
   * promise, no reply, the client waits 120 s).
   */
  netperfInfiniteCpuRate(e: Error): boolean {
    return e instanceof z.ZodError && e.issues.some((i) => i.path.join(".") === "cpuRate");
  },

  /**
   * netperf: NetperfClientSession.receive has no guard for the "done" state. Once the session has ended (any
   * failure, e.g. a timeout, or the "nobody asked for" check itself), frames that keep arriving pile up until that
   * check fires: another "failed" action and another io.close(), again for every further frame.
   */
  netperfClientFailsTwice(ends: ReadonlyArray<{ kind: string; failure?: { kind: string; detail?: string } }>): boolean {
    return ends.slice(1).every((a) => a.kind === "failed" && a.failure?.kind === "protocol" && a.failure.detail === "server sent messages nobody asked for");
  },
};
