// Run by deno.test.ts under Deno: the whole sockopt module graph must load, and report itself unavailable.
import { loadSockopt } from "../sockopt.ts";

console.log(JSON.stringify({ sockopt: (await loadSockopt()) === undefined ? "unavailable" : "loaded" }));
