import { TestRun } from "../../src/engine/test-run.ts";

export interface Iperf2TestInfo {
  role: "server" | "client";
  /** The other end as "host:port" ("[v6]:port"), as the status endpoint shows it. */
  peer: { host: string; port: number };
  transport: "tcp" | "udp";
  /** Requested test time; 0 when the test ends by amount of bytes or by the peer. */
  durationS: number;
  intervalS: number;
  /** "rr": a --bounceback client's round trips (transactions and their latency); a stream otherwise. */
  test?: "stream" | "rr";
}

/**
 * One iperf 2 test (a client invocation's streams) as the engine's Test: the status endpoint shows it and the reports
 * read its windows. Its window opens once `expectedPlanes` are attached (stock clients open all -P connections before
 * sending) or when the report group begins it, and counts from the streams' open, as iperf 2 counts from the accept.
 */
export function iperf2Test(info: Iperf2TestInfo, expectedPlanes: number): TestRun {
  const peer = info.peer.host.includes(":") ? `[${info.peer.host}]:${info.peer.port}` : `${info.peer.host}:${info.peer.port}`;
  return new TestRun(
    { mode: "iperf", role: info.role, peer, transport: info.transport, test: info.test ?? "stream" },
    { warmupS: 0, durationS: info.durationS, cooldownS: 0, intervalS: info.intervalS > 0 ? info.intervalS : 1 },
    { expectedPlanes, fromOpen: true },
  );
}
