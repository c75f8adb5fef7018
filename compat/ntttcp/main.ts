import { availableParallelism, hostname, machine, release, type, version } from "node:os";
import { basename } from "node:path";
import { loadNet } from "../../src/net/net.ts";
import { AppendLog, appendFileAtomic, checkOutputPath, saveOutput, writeFileAtomic } from "../../src/report/atomic-file.ts";
import { interruptedExitCode, shutdownSignal } from "../../src/signals.ts";
import { linuxBanner, linuxFlagDump, linuxLogLine, linuxRealtimeLine, linuxResultMessages, LINUX_DASHES } from "./linux-console.ts";
import { linuxJson } from "./linux-json.ts";
import { linuxXml } from "./linux-xml.ts";
import { parseCommand } from "./parse.ts";
import { LINUX_EXIT_USAGE } from "./linux-args.ts";
import { pinMainThread } from "./affinity.ts";
import { runReceiver, runSender, type LogLevel, type RunIo } from "./run.ts";
import { HeldSyncPort } from "./held-sync-port.ts";
import { NTTTCP_USAGE } from "./usage.ts";
import { WINDOWS_BANNER, windowsComputerName, windowsConsole, windowsFlagDump, windowsLines, windowsTimestamp, windowsXml } from "./windows-output.ts";

/** `anyperf ntttcp …`, or the binary run through a link named ntttcp / ntttcps / ntttcpr. */
export async function main(argv: string[]): Promise<number> {
  const argv0 = basename(process.argv0 ?? "ntttcp");
  // Tests emulate Windows sync inside their own port range; the real product uses data port + 1000.
  const offset = process.env.ANYPERF_NTTTCP_TOKEN_OFFSET;
  const cmd = parseCommand(argv, { cpus: availableParallelism(), argv0, tokenOffset: offset ? Number(offset) : undefined });
  if (cmd.kind === "help") {
    console.log(NTTTCP_USAGE);
    // ntttcp-for-linux exits 23 after its usage, even for -h; NTttcp for Windows exits 0.
    return cmd.dialect === "linux" ? LINUX_EXIT_USAGE : 0;
  }
  const { plan } = cmd;
  const warn = (text: string) => process.stderr.write(`anyperf ntttcp: ${text}\n`);
  for (const n of cmd.notes) warn(n);
  for (const x of plan.ignored) warn(`${x.option} ignored: ${x.reason}`);

  const linux = cmd.linux;
  // Every output is checked before the test, so a bad path fails in one line instead of losing a finished run.
  if (plan.outputs.xml) checkOutputPath(plan.dialect === "windows" ? "-xml" : "-x", plan.outputs.xml.path);
  if (plan.outputs.json) checkOutputPath("-j", plan.outputs.json);
  if (plan.outputs.log) checkOutputPath("-O", plan.outputs.log);
  // -O starts a new log (the file is replaced, not appended to) and gets each turn's lines as one block.
  const logFile = plan.outputs.log ? new AppendLog(plan.outputs.log, { flag: "-O", fresh: true }) : undefined;
  const out = (s: string) => process.stdout.write(plan.dialect === "windows" ? windowsLines(s) : s);
  const log = (level: LogLevel, text: string) => {
    if (plan.dialect === "windows") {
      // 5.40 prints its ERROR lines with the rest, on stdout; -v stamps every message with the time.
      if (level === "DBG" && !plan.outputs.verbose) return;
      const stamp = plan.outputs.verbose ? windowsTimestamp(new Date()) : "";
      out(`${stamp}${level === "ERR" ? "ERROR: " : ""}${text}\n`);
      return;
    }
    if (level === "DBG" && !plan.outputs.verbose) return;
    const line = linuxLogLine(new Date(), level, text);
    out(`${line}\n`);
    logFile?.append(`${line}\n`);
  };

  if (plan.dialect === "linux") {
    out(`${linuxBanner().join("\n")}\n`);
    for (const m of cmd.messages) log(m.level, m.text);
    if (plan.outputs.verbose && linux) {
      out(
        `${linuxFlagDump(plan, {
          sourceAddress: linux.clientAddress ?? (plan.family === "ipv6" ? "::" : "0.0.0.0"),
          cpuAffinity: linux.cpuAffinity >= 0 ? linux.cpuAffinity : null,
          threadsPerPort: linux.threadsPerPort,
          connsPerThread: linux.connsPerThread,
          multiClient: linux.multiClient,
          lastClient: linux.lastClient,
          showTcpRetrans: linux.showTcpRetrans,
          bandwidthBits: linux.bandwidth,
          fqRateBits: linux.fqRate,
        }).join("\n")}\n`,
      );
    }
    if (linux && linux.cpuAffinity >= 0) await pinMainThread(linux.cpuAffinity, log);
  } else {
    out(`${WINDOWS_BANNER}\n`);
    if (plan.outputs.verbose && cmd.windows) out(`${windowsFlagDump(plan, cmd.windows).join("\n")}\n`);
  }

  const signal = shutdownSignal();
  const tty = process.stdout.isTTY === true && process.env.TERM !== "dumb";
  const io: RunIo = {
    net: await loadNet(),
    signal,
    log,
    realtime: plan.dialect === "linux" && !plan.outputs.quiet ? (bytes, seconds) => out(linuxRealtimeLine(bytes, seconds, tty)) : undefined,
    nic: linux?.showNicPackets || undefined,
    interruptsMatching: linux?.showDevInterrupts || undefined,
    computerName: plan.dialect === "windows" ? windowsComputerName(hostname()) : hostname(),
    os: `${type()} ${hostname()} ${release()} ${version()} ${machine()}${type() === "Linux" ? " GNU/Linux" : ""}`,
  };
  // -H: a receiver serves one test after another until interrupted, on one sync port.
  if (plan.hold && plan.role === "receiver" && plan.sync.kind === "linux") io.heldSync = new HeldSyncPort(io.net);
  try {
    do {
      const results = plan.role === "sender" ? await runSender(plan, io) : await runReceiver(plan, io);
      if (plan.dialect === "linux" && linux) {
        for (const m of linuxResultMessages(results, {
          verbose: plan.outputs.verbose,
          showTcpRetrans: linux.showTcpRetrans,
          showNicPackets: linux.showNicPackets !== "",
          showDevInterrupts: linux.showDevInterrupts !== "",
        })) {
          log(m.level, m.text);
        }
        out(`${LINUX_DASHES}\n`);
        const xml = plan.outputs.xml;
        const json = plan.outputs.json;
        if (xml) saveOutput("-x", xml.path, () => writeFileAtomic(xml.path, linuxXml(plan, results, { showTcpRetrans: linux.showTcpRetrans })));
        if (json) saveOutput("-j", json, () => writeFileAtomic(json, linuxJson(plan, results, { showTcpRetrans: linux.showTcpRetrans })));
      } else if (cmd.windows) {
        log("DBG", "PrintOutput");
        // NTttcp appends one document per test (-H runs several); each lands whole or not at all.
        const [xml, windows] = [plan.outputs.xml, cmd.windows];
        if (xml) saveOutput("-xml", xml.path, () => appendFileAtomic(xml.path, windowsXml(plan, windows, results)));
        else out(windowsConsole(plan, results));
      }
    } while (plan.hold && plan.role === "receiver" && !signal.aborted);
  } finally {
    io.heldSync?.stop();
  }
  return interruptedExitCode(signal) ?? 0;
}
