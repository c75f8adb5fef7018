import { FrameReader } from "../../interop/netperf/frame-reader.ts";
import { PROC_STAT_CPU_RATE } from "../../interop/netperf/constants.ts";
import { decodeCpuCalibrateReply, encodeCpuCalibrateRequest, encodePassphrase, servErrno } from "../../interop/netperf/minor-messages.ts";
import { cpuCount } from "./cpu-meter.ts";
import { establishFailure, resolve, type ClientIo } from "./client.ts";
import type { CalibrateCommand } from "./netperf-args.ts";
import { sprintf } from "./printf.ts";

/** netperf waits this long for a reply before it gives up (recv_response_timed_n). */
const RESPONSE_TIMEOUT_MS = 120_000;

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
  const reader = new FrameReader();
  let answer: (reply: Uint8Array | undefined) => void = () => {};
  const replied = new Promise<Uint8Array | undefined>((res) => (answer = res));
  let control;
  try {
    control = await io.net.connect<undefined>({
      hostname: r.ip,
      port: cmd.controlPort,
      data: undefined,
      socket: {
        data: (_s, d) => {
          const [first] = reader.push(d);
          if (first) answer(first);
        },
        end: () => answer(undefined),
        close: () => answer(undefined),
        error: () => {},
      },
    });
  } catch {
    io.out(establishFailure(cmd.host, r.ip, cmd.controlPort));
    return 255;
  }
  // Both messages are 656 bytes: far below what a fresh socket takes without blocking.
  if (cmd.passphrase !== undefined) control.write(encodePassphrase(cmd.passphrase));
  control.write(encodeCpuCalibrateRequest());
  const timer = setTimeout(() => answer(undefined), RESPONSE_TIMEOUT_MS);
  const onAbort = () => answer(undefined);
  io.signal.addEventListener("abort", onAbort, { once: true });
  const reply = await replied;
  clearTimeout(timer);
  io.signal.removeEventListener("abort", onAbort);
  control.end();
  if (!reply) {
    io.err("recv_response: Connection reset by peer\n");
    return 1;
  }
  const errno = servErrno(reply);
  if (errno !== 0) {
    io.out(`netperf: remote error ${errno}`);
    return 255;
  }
  const { rate, cpus } = decodeCpuCalibrateReply(reply);
  io.out(sprintf("%g", rate) + (cmd.verbosity > 1 ? cpusLine(cpus, "remote") : ""));
  return 0;
}
