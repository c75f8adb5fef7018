import { decodeClassicStreamResponse } from "../../interop/netperf/classic-stream.ts";
import { DataPlane } from "../../src/engine/data-plane.ts";
import type { ClientIo } from "./client.ts";
import { classicStreamRequest, startClassic } from "./classic-phase.ts";
import { accepted } from "./control-exchange.ts";
import type { NetperfPlan } from "./plan.ts";
import { transportMss } from "./tcp-info-dump.ts";

const TITLE = "Maximum\nSegment\nSize (bytes)\n\n";

/**
 * netperf's TCP_MSS (send_tcp_mss): the classic DO_TCP_STREAM set-up, a data connection that moves no data, and
 * its TCP_MAXSEG printed. The connection is an engine stream like any other (a receiver that connects), stopped as
 * soon as it is up; its segment size is the Worker's first TCP_INFO.
 */
export async function runTcpMss(plan: NetperfPlan, io: ClientIo): Promise<number> {
  const started = await startClassic(plan, io);
  if (typeof started === "number") return started;
  const { control, ip, family } = started;
  const { remoteDataAddress } = started.plan;
  try {
    const reply = accepted(io, await control.ask(classicStreamRequest(plan, family)), 1);
    if (typeof reply === "number") return reply;
    const plane = await DataPlane.open([
      {
        kind: "tcp-recv",
        id: 0,
        connect: { host: remoteDataAddress ?? ip, port: decodeClassicStreamResponse(reply).dataPort },
        family,
        connections: 1,
        endOnEof: true,
      },
    ]);
    plane.go();
    await plane.stop();
    const mss = transportMss("tcp", plane.lastTcpInfo(0));
    const brand = plan.printHeaders || plan.brand === undefined ? "" : plan.brand;
    // netperf's switch on the verbosity has cases 0, 1 and 2 only: at any other level it prints no figure.
    if (plan.verbosity === 0) io.out(`${mss} ${brand}\n`);
    else if (plan.verbosity === 1 || plan.verbosity === 2) io.out((plan.printHeaders ? TITLE : "") + `${mss} ${brand}\n`);
    return 0;
  } finally {
    control.close();
  }
}
