import type { Net } from "./types.ts";

// Bun's objects already have the shapes in types.ts; the casts only bridge Bun's wider generic signatures.
type Loose = (o: unknown) => never;
export const bunNet: Net = {
  connect: ((o: unknown) => Bun.connect(o as Parameters<typeof Bun.connect>[0])) as unknown as Loose,
  listen: ((o: unknown) => Bun.listen(o as Parameters<typeof Bun.listen>[0])) as unknown as Loose,
  udpSocket: ((o: unknown) => Bun.udpSocket(o as Parameters<typeof Bun.udpSocket>[0])) as unknown as Loose,
};
