import { PROC_STAT_CPU_RATE } from "../../interop/netperf/constants.ts";
import { decodeCpuCalibrateReply, encodeCpuCalibrateRequest } from "../../interop/netperf/minor-messages.ts";
import { cpuCount } from "./cpu-stats.ts";
import type { ClientIo } from "./client.ts";
import { resolve } from "./control-connection.ts";
import { accepted, openControl } from "./control-exchange.ts";
import type { CalibrateCommand } from "./netperf-args.ts";
import { sprintf } from "./printf.ts";

const cpusLine = (n: number, side: "local" | "remote") => `\nThere ${n > 1 ? "are" : "is"} ${n} ${side} ${n > 1 ? "cpus" : "cpu"}\n`;

/**
 * LOC_CPU and REM_CPU: netperf prints the CPU rate its measurement method calibrates to (%g, no newline) and, with
 * -v 2, the CPU count. The remote one asks the netserver with CPU_CALIBRATE over the control connection.
 */
export async function runCalibrate(cmd: CalibrateCommand, io: ClientIo): Promise<number> {
  if (cmd.side === "local") {
    io.out(sprintf("%g", PROC_STAT_CPU_RATE) + (cmd.verbosity > 1 ? cpusLine(cpuCount(), "local") : ""));
    return 0;
  }
  const r = await resolve(cmd.host, cmd.family);
  if ("failure" in r) {
    io.out(r.failure);
    return 255;
  }
  const control = await openControl(io, cmd, r.ip);
  if (typeof control === "number") return control;
  const reply = accepted(io, await control.ask(encodeCpuCalibrateRequest()), 255);
  control.close();
  if (typeof reply === "number") return reply;
  const { rate, cpus } = decodeCpuCalibrateReply(reply);
  io.out(sprintf("%g", rate) + (cmd.verbosity > 1 ? cpusLine(cpus, "remote") : ""));
  return 0;
}
