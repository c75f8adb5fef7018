import type { DataPlane } from "../engine/data-plane.ts";
import type { SocketBuffers } from "../report/result.ts";

/**
 * -w as asked and as the kernel gave it on one end: the smallest SO_SNDBUF of its sending streams and SO_RCVBUF of
 * its receiving ones (the kernel may cap a stream below the others). Undefined without -w; a side left out where no
 * socket of it was read (where socket options cannot be read: src/sockopt).
 */
export function socketBuffers(requested: number | undefined, planes: { send?: DataPlane; recv?: DataPlane }): SocketBuffers | undefined {
  if (requested === undefined) return undefined;
  const least = (plane: DataPlane | undefined, side: "send" | "recv") => {
    const read = Array.from({ length: plane?.size ?? 0 }, (_, i) => plane!.socketBuffers(i)?.[side]).filter((v): v is number => v !== undefined);
    return read.length === 0 ? undefined : Math.min(...read);
  };
  const send = least(planes.send, "send"), receive = least(planes.recv, "recv");
  return { requested_bytes: requested, ...(send === undefined ? {} : { send_bytes: send }), ...(receive === undefined ? {} : { receive_bytes: receive }) };
}
