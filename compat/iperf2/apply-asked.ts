import type { Sockopt } from "../../src/sockopt/sockopt.ts";

/**
 * What a client's header asks of the server's side of its socket (a 2.2 client's -Z, the client's -S): stock servers
 * set it and, when the kernel says no, print why and go on with the default. Read back, so a silent no is said too.
 * True when the socket reads back what was asked.
 */
export function applyAsked(
  io: { sockopt: Sockopt | undefined; warn(text: string): void },
  fd: number | undefined,
  asked: { congestion: string } | { tos: number },
  what: string,
): boolean {
  const fail = (why: string) => {
    io.warn(`Attempt to set ${what} failed: ${why}`);
    return false;
  };
  if (fd === undefined || io.sockopt === undefined) return fail("this runtime gives no access to the socket's options");
  try {
    const now = io.sockopt.apply(fd, asked);
    const [key, want] = Object.entries(asked)[0] as ["congestion" | "tos", string | number];
    return now[key] === want || fail(`the socket reads back '${now[key] ?? "none"}'`);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e));
  }
}
