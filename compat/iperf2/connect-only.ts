import { connectTimesSummary } from "../../src/formulas.ts";
import { formatFixed } from "../../src/units.ts";
import { connectionNotes, withInterface } from "./connection-notes.ts";
import type { ClientPlan } from "./plan.ts";
import type { Printer } from "./printer.ts";
import type { TcpInit } from "./tcp-stats.ts";
import { type Endpoint, clientBanner, connectionLine } from "./text-report.ts";

/** One connection made and its figures; `close` ends it before a byte is sent. */
export interface MadeConnection {
  local: Endpoint;
  init?: TcpInit;
  connectMs: number;
  fd?: number;
  close(): void;
}

/**
 * `--connect-only[=N]`: as 2.1.8's client, each of -P threads makes N connections (10 without a value) one after
 * another, prints each one's line (handshake figures, connect time and wall time, with or without -e) and closes it
 * before any byte; with -e the connect times' summary follows. No test header is sent, so a server runs no test.
 */
export async function runConnectOnly(plan: ClientPlan, io: { printer: Printer; signal: AbortSignal }, connect: () => Promise<MadeConnection>): Promise<number> {
  const count = plan.connectOnly!;
  const banner = clientBanner({
    host: plan.host, port: plan.port, udp: false, buffer: 0, enhanced: plan.enhanced, pid: process.pid, writeLen: plan.len, flows: plan.parallel, tos: plan.tos, noDelay: plan.noDelay,
  });
  // Stock names no window here: the handshake is the whole test.
  banner.splice(banner.length - 2, 1, "TCP three-way-handshake (3WHS) only");
  io.printer.info(...banner);
  const server = { host: plan.host, port: plan.port };
  const times: number[] = [];
  let errors = 0;
  const thread = async (id: number) => {
    for (let i = 0; i < count && !io.signal.aborted; i++) {
      try {
        const c = await connect();
        c.close();
        times.push(c.connectMs);
        const notes = connectionNotes({ enhanced: true, sock: plan.enhanced ? c.fd : undefined, init: c.init, connectMs: c.connectMs, at: new Date() });
        io.printer.info(connectionLine(id, withInterface(c.local, plan.enhanced), server, notes));
      } catch (e) {
        errors++;
        io.printer.warning(`tcp connect failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: plan.parallel }, (_, i) => thread(i + 1)));
  const s = connectTimesSummary(times);
  if (plan.enhanced && s) {
    const f = (ms: number) => formatFixed(ms, 3);
    io.printer.info(`[ CT] final connect times (min/avg/max/stdev) = ${f(s.minMs)}/${f(s.avgMs)}/${f(s.maxMs)}/${f(s.stdevPrinted)} ms (tot/err) = ${times.length + errors}/${errors}`);
  }
  return 0;
}
