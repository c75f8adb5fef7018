/**
 * Every option of netperf 2.7.0 (`netperf -h`, and `-- -h` of omni and of the classic tests), with a value where one
 * is needed, for the never-hang table (never-hang-netperf.test.ts). Each case's args follow
 * `netperf -H 127.0.0.1 -p PORT -l 1`; `PORT` in them stands for the control port. Left out: -h and `-- -h` (they
 * print and exit 1 before any connection: netperf-classic.test.ts compares them with stock), and `-- -o ?`.
 */
import type { OptionCase } from "./never-hang.ts";

/** The global options, each with the default test (TCP_STREAM) unless the option names another. */
function globalCases(file: (name: string) => string): OptionCase[] {
  return [
    { option: "-4", args: ["-4"] },
    { option: "-6", args: ["-6"], host: "::1" },
    { option: "-a", args: ["-a", "4K,4K"] },
    { option: "-A", args: ["-A", "4K,4K"] },
    { option: "-b", args: ["-b", "4"] },
    { option: "-B", args: ["-B", "brand", "-P", "0"] },
    { option: "-c", args: ["-c"] },
    { option: "-C", args: ["-C"] },
    { option: "-d", args: ["-d"] },
    { option: "-D", args: ["-D", "0.5"] },
    { option: "-f", args: ["-f", "k"] },
    { option: "-F", args: ["-F", file("fill")] },
    { option: "-i", args: ["-i", "3,3"] },
    { option: "-I", args: ["-i", "3,3", "-I", "95,10"] },
    { option: "-j", args: ["-j"] },
    { option: "-k", args: ["-k", "1,1"] },
    { option: "-K", args: ["-K", "1,1"] },
    { option: "-l -N (count)", args: ["-l", "-5000"] },
    { option: "-L", args: ["-L", "127.0.0.1"] },
    { option: "-n", args: ["-n", "2"] },
    { option: "-N", args: ["-N", "-t", "TCP_STREAM", "--", "-P", ",PORT"] },
    { option: "-o", args: ["-o", "8,8"] },
    { option: "-O", args: ["-O", "8,8"] },
    { option: "-p port,lport", args: ["-p", "PORT,0"] },
    { option: "-P", args: ["-P", "0"] },
    { option: "-r", args: ["-i", "3,3", "-r"] },
    { option: "-s", args: ["-s", "1"] },
    { option: "-S", args: ["-S"] },
    { option: "-T", args: ["-T", "0,0"] },
    { option: "-v", args: ["-v", "2"] },
    { option: "-V", args: ["-V"] },
    { option: "-w", args: ["-w", "10"] },
    { option: "-W", args: ["-W", "2,2"] },
    { option: "-y", args: ["-y", "1,1"] },
    { option: "-Y", args: ["-Y", "0x10,0x10"] },
    { option: "-Z", args: ["-Z", "secret"] },
  ];
}

/** Each test netperf 2.7.0 runs by name. */
const TESTS = ["TCP_STREAM", "TCP_MAERTS", "TCP_RR", "TCP_CRR", "UDP_STREAM", "UDP_RR", "omni", "TCP_MSS", "TCP_CC", "TCP_SENDFILE", "LOC_CPU", "REM_CPU", "UUID"];

/** omni's test options (scan_omni_args), which the migrated tests read too: under omni, or the test they matter to. */
function omniCases(): OptionCase[] {
  const t = (test: string, ...opts: string[]) => ["-t", test, "--", ...opts];
  return [
    { option: "-- -4", args: t("omni", "-4") },
    { option: "-- -6", args: t("omni", "-6"), host: "::1" },
    { option: "-- -a", args: t("omni", "-a") },
    { option: "-- -b", args: t("TCP_RR", "-b", "4") },
    { option: "-- -B", args: t("omni", "-B") },
    { option: "-- -c", args: t("omni", "-c", "-d", "rr") },
    { option: "-- -C", args: t("omni", "-C") },
    { option: "-- -d send", args: t("omni", "-d", "send") },
    { option: "-- -d recv", args: t("omni", "-d", "recv") },
    { option: "-- -d rr", args: t("omni", "-d", "rr") },
    { option: "-- -D", args: t("omni", "-D") },
    { option: "-- -e", args: t("TCP_RR", "-e", "1") },
    { option: "-- -F", args: t("omni", "-F") },
    { option: "-- -g", args: t("omni", "-g") },
    { option: "-- -G", args: t("omni", "-G", "1000") },
    { option: "-- -H", args: t("omni", "-H", "127.0.0.1,4") },
    { option: "-- -i", args: t("omni", "-i", "1,1") },
    { option: "-- -I", args: t("omni", "-I") },
    { option: "-- -j", args: t("omni", "-j", "1") },
    { option: "-- -k", args: t("omni", "-k", "THROUGHPUT,RSR_SIZE_END") },
    { option: "-- -K", args: t("omni", "-K", "cubic,cubic") },
    { option: "-- -l", args: t("omni", "-l", "1") },
    { option: "-- -L", args: t("omni", "-L", "127.0.0.1,4") },
    { option: "-- -m", args: t("omni", "-m", "4K") },
    { option: "-- -M", args: t("omni", "-d", "recv", "-M", "4K") },
    { option: "-- -n", args: t("UDP_STREAM", "-n") },
    { option: "-- -N", args: t("UDP_STREAM", "-N") },
    { option: "-- -o", args: t("omni", "-o", "THROUGHPUT,ELAPSED_TIME") },
    { option: "-- -O", args: t("omni", "-O", "THROUGHPUT,P99_LATENCY") },
    { option: "-- -p", args: t("TCP_CRR", "-p", "20000,30000") },
    { option: "-- -P", args: t("omni", "-P", "0,0") },
    { option: "-- -r", args: t("omni", "-r", "64,128") },
    { option: "-- -r -b", args: t("omni", "-r", "64K", "-b", "12") },
    { option: "-- -R", args: t("UDP_STREAM", "-R", "1") },
    { option: "-- -s", args: t("omni", "-s", "128K") },
    { option: "-- -S", args: t("omni", "-S", "128K") },
    { option: "-- -t", args: t("omni", "-t", "stream") },
    { option: "-- -T udp", args: t("omni", "-T", "udp") },
    { option: "-- -T udp -d rr", args: t("omni", "-T", "udp", "-d", "rr") },
    { option: "-- -u", args: t("omni", "-u", "01234567-89ab-cdef-0123-456789abcdef") },
    { option: "-- -U", args: t("omni", "-U") },
    { option: "-- -V", args: t("omni", "-V") },
    { option: "-- -w", args: t("omni", "-w", "1") },
    { option: "-- -W", args: t("omni", "-W", "2") },
  ];
}

/** The options scan_sockets_args reads for TCP_MSS, TCP_CC and TCP_SENDFILE, under the test they matter to. */
function classicCases(): OptionCase[] {
  const t = (test: string, ...opts: string[]) => ["-t", test, "--", ...opts];
  return [
    { option: "TCP_CC -- -r", args: t("TCP_CC", "-r", "5,7") },
    { option: "TCP_CC -- -p", args: t("TCP_CC", "-p", "20000,30000") },
    { option: "TCP_SENDFILE -- -m -M", args: t("TCP_SENDFILE", "-m", "4K", "-M", "4K") },
    { option: "TCP_SENDFILE -- -s -S", args: t("TCP_SENDFILE", "-s", "128K", "-S", "128K") },
    { option: "TCP_SENDFILE -- -D", args: t("TCP_SENDFILE", "-D") },
    { option: "TCP_SENDFILE -- -C", args: t("TCP_SENDFILE", "-C") },
    { option: "TCP_SENDFILE -- -P", args: t("TCP_SENDFILE", "-P", "0,0") },
    { option: "TCP_SENDFILE -- -b", args: t("TCP_SENDFILE", "-b", "4") },
    { option: "TCP_MSS -- -n -N", args: t("TCP_MSS", "-n", "-N") },
    { option: "TCP_MSS -- -z", args: t("TCP_MSS", "-z") },
    { option: "TCP_MSS -- -V -w -W", args: t("TCP_MSS", "-V", "-w", "1", "-W", "2") },
    { option: "TCP_MSS -- -R", args: t("TCP_MSS", "-R", "1") },
    { option: "TCP_MSS -- -H -L", args: t("TCP_MSS", "-H", "127.0.0.1,4", "-L", "127.0.0.1,4") },
    { option: "TCP_MSS -- -4", args: t("TCP_MSS", "-4") },
    { option: "TCP_MSS -- -T", args: t("TCP_MSS", "-T", "tcp") },
  ];
}

export function netperfCases(file: (name: string) => string): OptionCase[] {
  return [...globalCases(file), ...TESTS.map((name) => ({ option: `-t ${name}`, args: ["-t", name] })), ...omniCases(), ...classicCases()];
}
