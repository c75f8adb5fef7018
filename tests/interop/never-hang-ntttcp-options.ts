/**
 * Every sender option of ntttcp-for-linux 1.4.3 at its newest commit (`ntttcp -h`), with a value where one is
 * needed, for the never-hang table (never-hang-ntttcp.test.ts). Left out: -r (the receiver's role), -h (help only),
 * -D (it forks into the background, where no bound can watch the run), and -p and -t, which every run passes.
 * `-6` and `-u` cases run against a receiver of that family or protocol, as a stock receiver needs.
 */
import type { OptionCase } from "./never-hang.ts";

/** `file`: a path the sender may write (-O, -x, -j); `cport`: the first of 4 free ports for -f (one per thread). */
export function ntttcpCases(file: (name: string) => string, cport: () => number): OptionCase[] {
  return [
    { option: "-P", args: ["-P", "2"] },
    { option: "-n", args: ["-n", "2"] },
    { option: "-l", args: ["-l", "2"] },
    { option: "-m", args: ["-m", "2,*,127.0.0.1"] },
    { option: "-m cpu", args: ["-m", "1,0,127.0.0.1"] },
    { option: "-a", args: ["-a", "127.0.0.1"] },
    { option: "-f", args: ["-f", String(cport())] },
    { option: "-b", args: ["-b", "64K"] },
    { option: "-B", args: ["-B", "100M"] },
    { option: "--fq-rate-limit", args: ["--fq-rate-limit", "100M"] },
    { option: "--no-delay", args: ["--no-delay"] },
    { option: "-W", args: ["-W", "1"] },
    { option: "-C", args: ["-C", "1"] },
    { option: "-N", args: ["-N"] },
    { option: "-L", args: ["-L"] },
    { option: "-M", args: ["-M"] },
    { option: "-e", args: ["-e"] },
    { option: "-H", args: ["-H"] },
    { option: "-O", args: ["-O", file("log")] },
    { option: "-x", args: ["-x", file("x.xml")] },
    { option: "-j", args: ["-j", file("j.json")] },
    { option: "-Q", args: ["-Q"] },
    { option: "-V", args: ["-V"] },
    { option: "--show-tcp-retrans", args: ["--show-tcp-retrans"] },
    { option: "--show-nic-packets", args: ["--show-nic-packets", "lo"] },
    { option: "--show-dev-interrupts", args: ["--show-dev-interrupts", "Local timer"] },
    { option: "-u", args: ["-u"] },
    { option: "-u -N", args: ["-u", "-N"] },
    { option: "-u -B", args: ["-u", "-B", "100M"] },
    { option: "-6", args: ["-6"], host: "::1" },
    { option: "-6 -N", args: ["-6", "-N"], host: "::1" },
  ];
}
