/** `anyperf iperf3 --help`: iperf3 3.12's options as this dialect supports them. */

export const USAGE_HINT = "Usage: anyperf iperf3 [-s|-c host] [options]\nTry `anyperf iperf3 --help' for more information.\n";

export const HELP = `Usage: anyperf iperf3 [-s|-c host] [options]
       anyperf iperf3 [-h|--help] [-v|--version]

Speaks iperf3 3.12's protocol: stock iperf3 clients can test against the server, and the client tests
against stock iperf3 servers. Output (text, -J, --json-stream) follows iperf3's.

Server or Client:
  -p, --port      #         server port to listen on/connect to (default 5201)
  -f, --format   [kmgtKMGT] format to report: Kbits, Mbits, Gbits, Tbits
  -i, --interval  #         seconds between periodic throughput reports (0 = none)
  -I, --pidfile file        write PID file
  -B, --bind <host>[%<dev>] bind to the interface associated with the address <host>
  -V, --verbose             more detailed output
  -J, --json                output in JSON format
  --json-stream             output in line-delimited JSON format (one event per line)
  --logfile f               send output to a log file
  --forceflush              force flushing output at every interval
  --timestamps<=format>     emit a timestamp at the start of each output line
  --rcv-timeout #           idle timeout for receiving data (default 120000 ms)
  --snd-timeout #           timeout for unacknowledged TCP data (ms)
  -d, --debug[=#]           emit debugging output
  -v, --version             show version information and quit
  -h, --help                show this message and quit
Server specific:
  -s, --server              run in server mode (serves many clients at once)
  -D, --daemon              run the server as a daemon
  -1, --one-off             handle one client connection then exit
  --server-bitrate-limit #[KMG][/#]  server's total bit rate limit, averaged over # s (default 5; 0 = no limit);
                            --max-rate #[KMG] is the same limit with the default window
  --idle-timeout #          with -1: give up after # seconds without a client
  --server-max-duration #   longest test the server runs, in seconds (0 = client decides); same as --max-duration
  --max-tests #             tests served at once; more get "server is busy" (default 8)
  --rsa-private-key-path    path to the RSA private key used to decrypt authentication credentials
  --authorized-users-path   path to the file of user credentials (lines of user,sha256("{user}password"))
  --time-skew-threshold     time skew threshold (in seconds) between the server and client during the
                            authentication process (default 10)
  --use-pkcs1-padding       RSA PKCS#1 v1.5 padding for the credentials instead of OAEP (for 3.12-3.16 peers)
  --max-streams #           streams (-P, twice -P with --bidir) one test may open
  --allow CIDR,...          serve only clients in these networks; others are closed at accept
                            (a refused stock client prints iperf3's own message: "number of parallel streams
                            too large", "test duration too long", "total required bandwidth is larger than
                            server limit" or "the server is busy"; the server's log names the limit and flag)
Client specific:
  -c, --client <host>       run in client mode, connecting to <host>
  -u, --udp                 use UDP rather than TCP
  --connect-timeout #       timeout for control connection setup (ms)
  -b, --bitrate #[KMG][/#]  target bitrate in bits/sec (0 for unlimited)
                            (default 1 Mbit/sec for UDP, unlimited for TCP)
  --pacing-timer #[KMG]     set the timing for pacing, in microseconds (default 1000)
  --fq-rate #[KMG]          enable fair-queuing based socket pacing in bits/sec
  -t, --time      #         time in seconds to transmit for (default 10 secs)
  -n, --bytes     #[KMG]    number of bytes to transmit (instead of -t)
  -k, --blockcount #[KMG]   number of blocks (packets) to transmit (instead of -t or -n)
  -l, --length    #[KMG]    length of buffer to read or write
                            (default 128 KB for TCP, dynamic or 1460 for UDP)
  --cport         <port>    bind to a specific client port (TCP and UDP, default: ephemeral port)
  -P, --parallel  #         number of parallel client streams to run
  -R, --reverse             run in reverse mode (server sends, client receives)
  --bidir                   run in bidirectional mode
  -w, --window    #[KMG]    set send/receive socket buffer sizes
  -C, --congestion <algo>   set TCP congestion control algorithm
  -M, --set-mss   #         set TCP/SCTP maximum segment size (MTU - 40 bytes)
  -N, --no-delay            set TCP/SCTP no delay, disabling Nagle's Algorithm
  -4, --version4            only use IPv4
  -6, --version6            only use IPv6
  -S, --tos N               set the IP type of service, 0-255
  --dscp N or --dscp val    set the IP dscp value, either 0-63 or symbolic
  -L, --flowlabel N         set the IPv6 flow label (sent to the server; not applied locally)
  -Z, --zerocopy            accepted for compatibility (data already comes from memory)
  -O, --omit N              perform pre-test for N seconds and omit the pre-test statistics
  -T, --title str           prefix every output line with this string
  --extra-data str          data string to include in client and server JSON
  --get-server-output       get results from server
  --udp-counters-64bit      use 64-bit counters in UDP test packets
  --repeating-payload       use repeating pattern in payload, instead of randomized payload
  --dont-fragment           set IPv4 Don't Fragment flag (sent to the server)
  --username                username for authentication (password from IPERF3_PASSWORD)
  --rsa-public-key-path     path to the RSA public key used to encrypt authentication credentials

[KMG] indicates options that support a K/M/G suffix for kilo-, mega-, or giga-
`;
