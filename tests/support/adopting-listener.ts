import { DataPlane } from "../../src/engine/data-plane.ts";
import type { Sockopt } from "../../src/sockopt/sockopt.ts";
import type { StreamSpecInput } from "../../src/stream-spec.ts";

/**
 * A listener on 127.0.0.1 whose first accepted socket is handed to a Worker the way the dialects' servers do it
 * (Sockopt.handOff, then a DataPlane that adopts the fd): `plane` settles once that plane is open.
 */
export function adoptingListener(
  sockopt: Sockopt,
  spec: (fd: number) => StreamSpecInput,
  options?: Parameters<typeof DataPlane.open>[1],
): { port: number; plane: Promise<DataPlane>; stop(closeActive: boolean): void } {
  let accepted!: (p: Promise<DataPlane>) => void;
  const plane = new Promise<DataPlane>((r) => (accepted = r));
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open: (s) => {
        const [fd] = sockopt.handOff(s);
        accepted(DataPlane.open([spec(fd!)], options));
      },
      data() {},
    },
  });
  return { port: listener.port, plane, stop: (closeActive) => listener.stop(closeActive) };
}
