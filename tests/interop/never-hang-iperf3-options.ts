/**
 * Every client option of iperf3 3.12 and 3.18 (`iperf3 --help`), with a value where one is needed, for the
 * never-hang table (never-hang-iperf3.test.ts). Server-only options (-s, -D, -1, --server-bitrate-limit,
 * --idle-timeout, --rsa-private-key-path, --authorized-users-path, --time-skew-threshold) are not a client's, and
 * authentication (--username, --rsa-public-key-path, --use-pkcs1-padding) is left out: it needs a key pair and a
 * password, and iperf3-auth.test.ts runs it.
 */
import type { OptionCase } from "./never-hang.ts";

/** `file`: a path the client may read (-F) or write (--logfile, -I). */
export function iperf3Cases(file: (name: string) => string, cport: () => number, since318: boolean): OptionCase[] {
  const cases: OptionCase[] = [
    { option: "-f", args: ["-f", "k"] },
    { option: "-i", args: ["-i", "0.5"] },
    { option: "-I", args: ["-I", file("pid")] },
    { option: "-F", args: ["-F", file("send")] },
    { option: "-A", args: ["-A", "0"] },
    { option: "-B", args: ["-B", "127.0.0.1"] },
    { option: "-B host%dev", args: ["-B", "127.0.0.1%lo"] },
    { option: "-c host%dev", args: [], host: "127.0.0.1%lo" },
    { option: "--bind-dev", args: ["--bind-dev", "lo"] },
    { option: "-V", args: ["-V"] },
    { option: "-J", args: ["-J"] },
    { option: "--logfile", args: ["--logfile", file("log")] },
    { option: "--forceflush", args: ["--forceflush"] },
    { option: "--timestamps", args: ["--timestamps"] },
    { option: "--rcv-timeout", args: ["-R", "--rcv-timeout", "2000"] },
    { option: "--snd-timeout", args: ["--snd-timeout", "2000"] },
    { option: "-d", args: ["-d"] },
    { option: "--sctp", args: ["--sctp"] },
    { option: "--nstreams", args: ["--sctp", "--nstreams", "2"] },
    { option: "-X", args: ["--sctp", "-X", "127.0.0.1"] },
    { option: "-u", args: ["-u"] },
    { option: "--connect-timeout", args: ["--connect-timeout", "2000"] },
    { option: "-b", args: ["-b", "100m"] },
    { option: "-b #/#", args: ["-b", "100m/10"] },
    { option: "--pacing-timer", args: ["--pacing-timer", "2000"] },
    { option: "-R --pacing-timer", args: ["-R", "-b", "100m", "--pacing-timer", "2000"] },
    { option: "-R -b #/#", args: ["-R", "-b", "100m/10"] },
    { option: "--fq-rate", args: ["--fq-rate", "100m"] },
    { option: "-u --fq-rate", args: ["-u", "--fq-rate", "100m"] },
    { option: "-n", args: ["-n", "10M"] },
    { option: "-k", args: ["-k", "100"] },
    { option: "-l", args: ["-l", "64K"] },
    { option: "-u -l", args: ["-u", "-l", "1400"] },
    { option: "--cport", args: ["--cport", String(cport())] },
    { option: "-P", args: ["-P", "4"] },
    { option: "-R", args: ["-R"] },
    { option: "-u -R", args: ["-u", "-R"] },
    { option: "--bidir", args: ["--bidir"] },
    { option: "-u --bidir", args: ["-u", "--bidir"] },
    { option: "-w", args: ["-w", "256K"] },
    { option: "-C", args: ["-C", "reno"] },
    { option: "-C unknown", args: ["-C", "nosuchcc"] },
    { option: "-M", args: ["-M", "1000"] },
    { option: "-N", args: ["-N"] },
    { option: "-4", args: ["-4"] },
    { option: "-6", args: ["-6"], host: "::1" },
    { option: "-S", args: ["-S", "0x10"] },
    { option: "--dscp", args: ["--dscp", "CS1"] },
    { option: "-L", args: ["-L", "5"], host: "::1" },
    { option: "-Z", args: ["-Z"] },
    { option: "-O", args: ["-O", "1"] },
    { option: "-T", args: ["-T", "title"] },
    { option: "--extra-data", args: ["--extra-data", "x", "-J"] },
    { option: "--get-server-output", args: ["--get-server-output"] },
    { option: "--udp-counters-64bit", args: ["-u", "--udp-counters-64bit"] },
    { option: "--repeating-payload", args: ["--repeating-payload"] },
    { option: "--dont-fragment", args: ["-u", "--dont-fragment"] },
  ];
  const newer: OptionCase[] = [
    { option: "--json-stream", args: ["--json-stream"] },
  ];
  return since318 ? [...cases, ...newer] : cases;
}
