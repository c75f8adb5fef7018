import { UserError } from "../../src/errors.ts";

/** The one line that refuses an option a stock server cannot carry, naming the peer, the reason and the way out. */
export function refuse(peer: string): (flag: string, why: string) => never {
  return (flag, why) => {
    throw new UserError(`${flag} cannot be run against ${peer === "netperf" ? "a" : "an"} ${peer} server: ${why}`, 2);
  };
}

/** A dialect's own parse of the command built for its server: a value it refuses is refused naming that server. */
export function parsedFor<T>(server: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof UserError) throw new UserError(`against ${server}: ${e.message}`, 2);
    throw e;
  }
}
