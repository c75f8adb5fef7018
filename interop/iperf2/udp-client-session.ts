import { UDP_HEADER_OFFSET, encodeClientHeader } from "./client-header.ts";
import { type ClientRequest, type ClientRequestInput, ClientRequest as ClientRequestSchema, buildClientHeader } from "./client-request.ts";
import { UDP_TRIP_START_AT, finSeq, readIperf2, stampIperf2, timeval, udpTemplate } from "./datagram.ts";
import { REPORT_MIN_LENGTH, type ServerReport, decodeServerReport } from "./server-report.ts";
import { UdpReceiverStats } from "./udp-receiver-stats.ts";
import { Iperf2WireError } from "./wire-error.ts";
import { put32 } from "./words.ts";


/** iperf 2's UDP datagram size over IPv4 (1450 over IPv6). */
export const DEFAULT_UDP_LEN_V4 = 1470;
export const DEFAULT_UDP_LEN_V6 = 1450;
/** Stock client: resend the FIN every 10 ms, give up after 2 s ("did not receive ack of last datagram"). */
export const FIN_RESEND_MS = 10;
export const FIN_GIVE_UP_MS = 2000;

export type UdpClientOutcome =
  /** The server's answer to our FIN; `report` is null when it was too short to decode (stock prints garbage then). */
  | { kind: "report"; report: ServerReport | null }
  /** -R: a data datagram from the server, accounted in `received`. */
  | { kind: "data" }
  /** -R: the server's FIN; the test is over. */
  | { kind: "fin" }
  /** Nothing we expect at this point (stray or duplicate datagram). */
  | { kind: "ignored" };

/**
 * Client side of an iperf 2 UDP test. Builds the datagram template (16-byte block, the client header at offset 16,
 * zeros), stamps datagrams and FINs, and reads what the server sends back: the report after our FIN, or the whole
 * -R data stream (counted here with the same rules a server uses, since no report comes back in that direction).
 */
export class UdpClientSession {
  readonly request: ClientRequest;
  readonly template: Uint8Array<ArrayBuffer>;
  /** Where our header ends in each datagram (an --isochronous client's frame fields are its last 32 bytes). */
  readonly headerEnd: number;
  /** Receiver-side figures for -R. */
  readonly received = new UdpReceiverStats();
  finSent = false;
  report: ServerReport | null = null;
  private done = false;

  constructor(request: ClientRequestInput, readonly datagramSize: number) {
    this.request = ClientRequestSchema.parse({ ...request, transport: "udp" });
    const header = buildClientHeader(this.request);
    const encoded = header ? encodeClientHeader(header, "udp") : null;
    this.template = udpTemplate(datagramSize, encoded);
    this.headerEnd = UDP_HEADER_OFFSET + (encoded?.length ?? 0);
    const t = this.request.tripStart;
    if (header && this.request.tripTimes && t && datagramSize >= UDP_TRIP_START_AT + 8) {
      put32(this.template, UDP_TRIP_START_AT, t.sec);
      put32(this.template, UDP_TRIP_START_AT + 4, t.usec);
    }
  }

  /** A stamped copy of the template; for senders that do not stamp in place (tests, the -R trigger datagram). */
  datagram(seq: number, wallSeconds: number): Uint8Array<ArrayBuffer> {
    const out = this.template.slice();
    stampTime(out, seq, wallSeconds);
    return out;
  }

  /** The `attempt`-th FIN (0-based) after data datagrams 1..lastSeq; each resend counts one lower, like stock. */
  fin(lastSeq: number, attempt: number, wallSeconds: number): Uint8Array {
    this.finSent = true;
    return this.datagram(finSeq(lastSeq) - attempt, wallSeconds);
  }

  get finished(): boolean {
    return this.done;
  }

  onDatagram(bytes: Uint8Array, arrival: number): UdpClientOutcome {
    if (this.done) return { kind: "ignored" };
    if (this.request.direction === "forward") {
      if (!this.finSent) return { kind: "ignored" };
      this.done = true;
      // Any datagram after the FIN is the report (stock behaviour); decode it when it is long enough to mean anything.
      this.report = bytes.length >= REPORT_MIN_LENGTH ? decodeServerReport(bytes) : null;
      return { kind: "report", report: this.report };
    }
    let stamp;
    try {
      stamp = readIperf2(bytes);
    } catch (e) {
      if (e instanceof Iperf2WireError) return { kind: "ignored" };
      throw e;
    }
    this.received.add(stamp.seq, stamp.sec + stamp.usec / 1e6, arrival, bytes.length);
    if (stamp.seq < 0) {
      this.done = true;
      return { kind: "fin" };
    }
    return { kind: "data" };
  }
}

export function stampTime(buf: Uint8Array, seq: number, wallSeconds: number): void {
  const { sec, usec } = timeval(wallSeconds);
  stampIperf2(buf, seq, sec, usec);
}
