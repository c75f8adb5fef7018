import { z } from "zod";

/** A parsed `--allow` network (cidr.ts makes them). Apart from cidr.ts so Workers, which only match, load no zod. */
export const Cidr = z.object({
  family: z.union([z.literal(4), z.literal(6)]),
  /** Network address, 4 or 16 bytes, host bits cleared. */
  bytes: z.instanceof(Uint8Array),
  prefix: z.int().min(0).max(128),
  /** As the user wrote it, for messages. */
  text: z.string(),
});
export type Cidr = z.infer<typeof Cidr>;
