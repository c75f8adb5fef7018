import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { UserError } from "../errors.ts";
import { num } from "./plan-args.ts";

/** Most servers one run drives: each is a control connection and -P streams of this host's Workers. */
export const MAX_HOSTS = 256;
/** A --hosts file larger than this is refused before it is read (a host a line: 256 lines are far below it). */
const MAX_HOSTS_FILE_BYTES = 64 << 10;

/** HOST, HOST:PORT, [V6] or [V6]:PORT; a bare IPv6 address keeps its colons. */
export function splitHostPort(text: string): { host: string; port?: string } {
  const bracketed = /^\[(.*)\](?::(.*))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] };
  const parts = text.split(":");
  return parts.length === 2 ? { host: parts[0]!, port: parts[1] } : { host: text };
}

/** A --hosts file's entries: one HOST[:PORT] a line; blank lines and everything after '#' are left out. */
export function hostsFileEntries(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.replace(/#.*/, "").trim())
    .filter((l) => l.length > 0);
}

/** Reads --hosts FILE, its size bounded before the read. */
export function readHostsFile(path: string): string[] {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw new UserError(`--hosts ${path}: cannot open it (${(e as { code?: string }).code ?? (e as Error).message}): pass a readable file, one HOST[:PORT] a line`, 2);
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_HOSTS_FILE_BYTES) throw new UserError(`--hosts ${path}: ${size} bytes, over the ${MAX_HOSTS_FILE_BYTES} a host list may hold: pass a list of at most ${MAX_HOSTS} hosts`, 2);
    const buf = new Uint8Array(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    const entries = hostsFileEntries(new TextDecoder().decode(buf.subarray(0, got)));
    if (entries.length === 0) throw new UserError(`--hosts ${path}: no host in it: write one HOST[:PORT] a line`, 2);
    return entries;
  } finally {
    closeSync(fd);
  }
}

/**
 * Each server of a run, with its port: its own (HOST:PORT), else -p's, else the default. Every entry is a server of
 * its own: the same HOST:PORT twice would run two tests on one server, which is refused.
 */
export function hostPorts(entries: readonly string[], portFlag: string | undefined, defaultPort: number): { host: string; port: number; text: string }[] {
  if (entries.length > MAX_HOSTS) throw new UserError(`${entries.length} servers given, over the ${MAX_HOSTS} one run drives: split them over runs`, 2);
  const seen = new Set<string>();
  return entries.map((text) => {
    const { host, port: own } = splitHostPort(text);
    if (host === "") throw new UserError(`'${text}': no host in it: pass HOST or HOST:PORT`, 2);
    if (own !== undefined && portFlag !== undefined && entries.length === 1) throw new UserError(`${text} and -p ${portFlag} both name the port: pass one`, 2);
    const port = own !== undefined ? (/^\d+$/.test(own) ? Number(own) : NaN) : num("port", portFlag, defaultPort);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UserError(`${own !== undefined ? text : `-p ${portFlag}`}: not a port; pass 1-65535`, 2);
    const key = `${host.toLowerCase()}:${port}`;
    if (seen.has(key)) throw new UserError(`${text} is given twice (as ${host}:${port}): name each server once`, 2);
    seen.add(key);
    return { host, port, text };
  });
}
