import { expect, test } from "bun:test";
import { listeningPorts } from "./proc-net.ts";

// Lines of this machine's /proc/net/tcp and /proc/net/tcp6 (a listener on 127.0.0.1:28400, one on [::]:26990,
// and an established connection on 25211 that must not count).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:6EF0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3770299 1 00000000e6a1ae7e 100 0 0 10 0
   5: 0100007F:627B 0100007F:ECF2 01 00000000:00000000 00:00000000 00000000     0        0 0 3 00000000e797b232
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:696E 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2838789 1 000000001c4b9ca8 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:627B 0000000000000000FFFF00000100007F:ECF2 06 00000000:00000000 03:00000AC3 00000000     0        0 0 3 00000000e797b232
`;

test("IPv4 listeners only, in decimal", () => {
  expect([...listeningPorts(TCP)]).toEqual([0x6ef0]);
});

test("IPv6 listeners, established and TIME_WAIT sockets ignored", () => {
  expect([...listeningPorts(TCP6)]).toEqual([0x696e]);
});

test("empty or header-only text has no listeners", () => {
  expect(listeningPorts("").size).toBe(0);
  expect(listeningPorts(TCP.split("\n")[0]!).size).toBe(0);
});
