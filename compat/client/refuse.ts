import { UserError } from "../../src/errors.ts";

/** The one line that refuses an option a stock server cannot carry, naming the peer, the reason and the way out. */
export function refuse(peer: string): (flag: string, why: string) => never {
  return (flag, why) => {
    throw new UserError(`${flag} cannot be run against a ${peer} server: ${why}`, 2);
  };
}
