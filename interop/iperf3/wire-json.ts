/**
 * Shared pieces for the two JSON documents of the control connection: turning frame bytes into a value, the zod
 * shapes of iperf3 numbers, and turning a zod failure into a one-line protocol error.
 */
import { z } from "zod";
import { Iperf3ProtocolError } from "./framing.ts";
import { Errno } from "../../lib/errno.ts";
import { requirement } from "../../lib/requirement.ts";

const TWO63 = 2 ** 63;

/**
 * 3.12 prints negative integers as unsigned 64-bit; any value at or above 2^63 stands for -1
 * (docs/protocols/iperf3.md §2.3).
 */
export function fromWireInt(v: number): number {
  return v >= TWO63 ? -1 : v;
}

/** An integer as 3.12 writes it: a JSON number, possibly the unsigned image of -1. */
export const WireInt = z.number().transform(fromWireInt).pipe(z.int());

/** A non-negative integer count or size within [min, max]. */
export function wireCount(min = 0, max = Number.MAX_SAFE_INTEGER) {
  return z.number().transform(fromWireInt).pipe(z.int().min(min).max(max));
}
export const WireDouble = z.number();
/** cJSON tests only presence for flags such as "reverse" (even `false` switches them on in a 3.12 server). */
export const Flag = z.unknown();

export function parseJsonBytes(json: Uint8Array, what: string, iErrno: number): unknown {
  const text = new TextDecoder().decode(json);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Iperf3ProtocolError(`${what} is not valid JSON (${(e as Error).message})`, iErrno, Errno.EBADMSG);
  }
}

export function zodToProtocolError(what: string, err: z.ZodError, iErrno: number): Iperf3ProtocolError {
  const issue = err.issues[0];
  const where = issue && issue.path.length > 0 ? `"${issue.path.join(".")}"` : "document";
  return new Iperf3ProtocolError(`${what}: ${where} ${issue ? `must be ${requirement(issue)}` : "is invalid"}`, iErrno, Errno.EINVAL);
}
