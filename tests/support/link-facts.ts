/** Prints, as JSON, what this namespace's /proc and /sys say about the link to argv[2]: run inside a namespace. */
import { readTcpBufferCeilings } from "../../src/host/link-buffers.ts";
import { readLink } from "../../src/host/link.ts";

console.log(JSON.stringify({ link: readLink(process.argv[2] ?? ""), buffers: readTcpBufferCeilings() }));
