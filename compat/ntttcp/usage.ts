import { POLICY_HELP } from "../../src/access/server-policy.ts";

/** Help text for `anyperf ntttcp`: both dialects, and how this build differs from the originals. */
export const NTTTCP_USAGE = `usage: anyperf ntttcp [--windows|--linux] <ntttcp options>
       (or run the binary through a link named ntttcp, ntttcps or ntttcpr)

Pairs with ntttcp-for-linux 1.4.3 and NTttcp for Windows 5.40, in either role, on their command lines.
The dialect is --windows/--linux, else the flags decide: -ns -wu -cd -xml -sb -rb -a [n] -v are Windows;
-N -W -C -x -j -n -B -P -M -L -V and clustered/attached forms (-VN, -p5001, -s10.0.0.1) are Linux.
A command valid in both (e.g. -r -m 4,*,10.0.0.5 -t 300) is read the ntttcp-for-linux way.

ntttcp-for-linux (case-sensitive, getopt: -VN, -p5001, optional arguments, applied left to right):
  -r [addr] / -s [addr]   receiver (bind address) / sender (receiver address)
  -m P,cpu,addr           P ports, 1 thread per port (later -P/-n still apply), cpu = * or an id
  -P n  -n n  -l n        ports (16), threads per port (4), connections per thread (1)
  -p port                 base data port (5001); sync uses port-1 unless -N
  -N                      no sync (pair with Windows -ns)      -M / -L   multi-client receiver / last client
  -W s  -t s  -C s        warm-up, duration (60), cool-down    -u UDP    -6 IPv6
  -b size  -B bits/s      I/O size (send 128K, recv 64K), bandwidth cap     -f [port] -a addr   source port/address
  -O [f]  -x [f]  -j [f]  log / XML / JSON files                -Q quiet  -V verbose
  --show-tcp-retrans  --show-nic-packets IF  --show-dev-interrupts STR  --fq-rate-limit R  --no-delay
NTttcp for Windows (separate words, any case):
  -s / -r  -m T,cpu,host [T,cpu,host ...]   T threads = T connections on ports base+i
  -l len  -n buffers  -t s  -wu s  -cd s  -p port  -ns  -u  -6  -rb/-sb size  -ndl  -nic addr  -thr KB/s
  -xml [file] (appended)  -v  -hpt; Windows-only machinery (-a -w -x -icp -na -cfi -es -qos -jm -ps -sp ...)
  is accepted and reported as ignored.

${POLICY_HELP}  (a receiver is one test: --allow closes sync and token connections from other networks, which fails
  the sender; a sender negotiating a longer or continuous cycle than --max-duration is refused; with -N/-ns the
  data connections are not checked against --allow; --max-tests/--max-streams/--max-rate change nothing here.)

Differences from the originals: figures this host cannot measure print as n/a (never 0); the Windows per-thread
Time(s)/KB/s columns show real values (5.40 prints 0.000); a sender keeps sending 1 s past its cycle so the peer's
window ends while data flows; a receiver always ends on its own clock, and without sync starts at the first byte
(TCP, UDP) rather than at the first connection; a cycle of 69/76/82/88 s is proposed as one
second more (the Linux receiver would read it as a command).`;
