import type { TcpBufferCeilings } from "./link-facts.ts";
import { readIfPresent } from "./link.ts";

/** The last of the three numbers of tcp_rmem / tcp_wmem ("min default max"), or a lone number (rmem_max). */
export function parseBufferMax(text: string | undefined): number | undefined {
  const fields = text?.trim().split(/\s+/) ?? [];
  const v = Number(fields[fields.length - 1]);
  return fields.length > 0 && Number.isSafeInteger(v) && v > 0 ? v : undefined;
}

/** This host's ceilings; `proc` is the root of /proc, for tests. */
export function readTcpBufferCeilings(proc = "/proc"): TcpBufferCeilings {
  const out: TcpBufferCeilings = {};
  const put = (key: keyof TcpBufferCeilings, path: string) => {
    const v = parseBufferMax(readIfPresent(`${proc}/sys/net/${path}`));
    if (v !== undefined) out[key] = v;
  };
  put("send_max", "ipv4/tcp_wmem");
  put("receive_max", "ipv4/tcp_rmem");
  put("send_set_max", "core/wmem_max");
  put("receive_set_max", "core/rmem_max");
  return out;
}

/**
 * The window one stream can reach: the smaller of the sender's send buffer and the receiver's receive buffer, each
 * the user's -w when set (capped by the *_set_max ceiling) or the autotuning ceiling. Undefined when neither end
 * is known.
 */
export function streamWindowBytes(sender: TcpBufferCeilings | undefined, receiver: TcpBufferCeilings | undefined, requested?: number): number | undefined {
  const pick = (auto: number | undefined, setMax: number | undefined) =>
    requested === undefined ? auto : setMax === undefined ? requested : Math.min(requested, setMax);
  const ends = [pick(sender?.send_max, sender?.send_set_max), pick(receiver?.receive_max, receiver?.receive_set_max)];
  const known = ends.filter((v): v is number => v !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
}
