/**
 * Test-only: a native server in its own process until `anyperf serve` lands. argv: PORT [--host H (127.0.0.1)]
 * [--token T] [--max-tests N] [--max-streams N] [--max-duration S] [--max-rate R] [--allow CIDR]. Prints
 * "listening PORT" once it is up.
 */
import { startNativeServer } from "../../src/native/server.ts";
import { takeServerPolicyOptions } from "../../src/access/server-policy.ts";

const { rest, policy } = takeServerPolicyOptions(process.argv.slice(2));
const port = Number(rest[0] ?? 0);
const option = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
const server = await startNativeServer({ host: option("--host") ?? "127.0.0.1", port, token: option("--token"), policy, log: (l) => console.error(l) });
console.log(`listening ${server.port}`);
const stop = async () => {
  await server.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
