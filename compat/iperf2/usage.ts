import { POLICY_HELP } from "../../src/access/server-policy.ts";

/** `anyperf iperf --help`: iperf 2's options as this dialect understands them. */
export const IPERF2_USAGE = `Usage: anyperf iperf [-s|-c host] [options]
       anyperf iperf [-h|--help] [-v|--version]

iperf 2.1.8 compatible: talks to stock iperf 2 servers and clients in both directions.

Client/Server:
  -b, --bandwidth #[kmgKMG | pps]  bandwidth to send at in bits/sec or packets/sec
  -e, --enhanced    use enhanced reporting giving more tcp/udp and traffic information
  -f, --format    [abkmgABKMG]  format to report: Kbits, Mbits, KBytes, MBytes
  -i, --interval  #        seconds between periodic bandwidth reports
  -l, --len       #[kmKM]  length of buffer to read or write (TCP=128K, v4 UDP=1470, v6 UDP=1450)
  -m, --print_mss          print TCP maximum segment size
  -o, --output    <file>   output the report to this file
  -p, --port      #        server port to listen on/connect to (default 5001)
  -u, --udp                use UDP rather than TCP
  -w, --window    #[KM]    TCP window size (socket buffer size)
  -B, --bind      <host>   bind to <host> (client: <host>[:<port>])
  -C, --compatibility      for use with older versions: send no test header
  -M, --mss       #        set TCP maximum segment size
  -N, --nodelay            set TCP no delay, disabling Nagle's Algorithm
  -S, --tos       #        set the socket's IP_TOS (byte) field (number or name: ef, af11, cs1, ...)
  -V, --ipv6_domain        use IPv6
  -Z, --tcp-congestion <algo>  set TCP congestion control algorithm
  -y, --reportstyle C      report as Comma-Separated Values

Server specific:
  -s, --server             run in server mode
  -1, --singleclient       serve one client, then exit
  -t, --time      #        time in seconds to listen for new connections
  -D, --daemon             run the server in the background

${POLICY_HELP}  (iperf 2 cannot say no: a refused TCP connection is closed, a refused UDP flow's datagrams are dropped,
  and the server logs the limit and its flag. --max-duration ends -n and overrunning tests; --max-rate checks -b.)

Client specific:
  -c, --client    <host>   run in client mode, connecting to <host>
  -d, --dualtest           do a bidirectional test simultaneously (the server connects back)
  -r, --tradeoff           do a bidirectional test individually (the server connects back afterwards)
  -L, --listenport #       port to receive the -d/-r connections on (default: -p)
  -R, --reverse            reverse the test (client receives, server sends)
      --full-duplex        run a full duplex test using the same socket
  -n, --num       #[kmgKMG]  number of bytes to transmit (instead of -t)
  -t, --time      #        time in seconds to transmit for (default 10 secs)
  -P, --parallel  #        number of parallel client streams to run
  -X, --peer-detect        ask the server for its version
      --no-udp-fin         no final server report at the end of a UDP test
      --trip-times         stamp what the client sends, for the server's one-way latency (clocks in sync)
      --txstart-time #     epoch time to start sending at (TCP streams the client sends)
      --isochronous[=fps:mean,stddev]  send frames (emulate video traffic; default 60:20m,0)
      --ipg #              gap between a UDP frame's datagrams, in ms
      --connect-only[=n]   only connect, n times per stream (default 10), and print each connect time
      --tcp-write-times    time every TCP write: avg/min/max/stdev (cnt) on each line
      --tcp-quickack       the receiving end sets TCP_QUICKACK before each read (the server; we too with -R)
      --histograms[=w<u|m>,bins,low,high]  with write times, their histogram per line (default 100u,10000,5,95)
      --bounceback[=n]     request/reply round trips: a burst of n requests (default 10) every period
      --bounceback-hold #      ms the server holds each reply (default 0)
      --bounceback-period #    seconds between bursts (default 1; 0: back to back)
      --bounceback-request #[kmKM]  request size (default 100 bytes, or -l)
      --bounceback-reply #[kmKM]    reply size (default the request's; 2.2 servers)
      --bounceback-no-quickack     leave TCP_QUICKACK off (default: set after each write)

Lowercase suffixes are 10^3 based and uppercase are 2^n based (1k = 1000, 1K = 1024, 1m = 1,000,000, 1M = 1,048,576).
`;
