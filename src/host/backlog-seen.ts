import { z } from "zod";

/** What a shaper's queue held over a watch (src/host/backlog-watch.ts): the median and the largest of its reads, bytes. */
export const BacklogSeen = z.object({ interface: z.string(), kind: z.string(), rate_bps: z.number(), backlog_bytes: z.number(), backlog_max_bytes: z.number() });
export type BacklogSeen = z.infer<typeof BacklogSeen>;
