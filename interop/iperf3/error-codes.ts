/**
 * iperf3 error numbers (i_errno) as they travel in a SERVER_ERROR payload, and the text a 3.12 peer prints for them.
 * `withErrno` marks the messages the stock tool suffixes with ": <strerror(errno)>".
 */
import { strerror } from "../../lib/errno.ts";

export const IErrno = {
  IENONE: 0,
  IEUNIMP: 13,
  IEMAXSERVERTESTDURATIONEXCEEDED: 37,
  IEENDCONDITIONS: 16,
  IEREVERSEBIDIR: 25,
  IETOTALRATE: 27,
  IECTRLCLOSE: 109,
  IEMESSAGE: 110,
  IESENDMESSAGE: 111,
  IERECVMESSAGE: 112,
  IESENDPARAMS: 113,
  IERECVPARAMS: 114,
  IESENDRESULTS: 116,
  IERECVRESULTS: 117,
  IECLIENTTERM: 119,
  IESERVERTERM: 120,
  IEACCESSDENIED: 121,
  IERECVCOOKIE: 106,
  IEPROTOCOL: 131,
  IECONNECT: 103,
  IESETMSS: 123,
  IESETCONGESTION: 134,
  IEAUTHTEST: 142,
  IENOMSG: 144,
  IECREATESTREAM: 200,
  IESTREAMLISTEN: 202,
  IESTREAMCONNECT: 203,
  IESTREAMACCEPT: 204,
  IESTREAMWRITE: 205,
  IESTREAMREAD: 206,
  IESTREAMCLOSE: 207,
  IESTREAMID: 208,
} as const;

interface ErrText {
  text: string;
  withErrno: boolean;
}

const TEXT: Record<number, ErrText> = {
  0: { text: "no error", withErrno: false },
  13: { text: "an option you are trying to set is not implemented yet", withErrno: false },
  37: { text: "client's requested duration exceeds the server's maximum permitted limit", withErrno: false },
  16: { text: "only one test end condition (-t, -n, -k) may be specified", withErrno: false },
  25: { text: "cannot be both reverse and bidirectional", withErrno: false },
  27: { text: "total required bandwidth is larger than server limit", withErrno: false },
  103: { text: "unable to connect to server", withErrno: true },
  106: { text: "unable to receive cookie at server", withErrno: true },
  109: { text: "control socket has closed unexpectedly", withErrno: false },
  110: { text: "received an unknown control message", withErrno: false },
  111: { text: "unable to send control message", withErrno: true },
  112: { text: "unable to receive control message", withErrno: true },
  113: { text: "unable to send parameters to server", withErrno: true },
  114: { text: "unable to receive parameters from client", withErrno: true },
  116: { text: "unable to send results", withErrno: true },
  117: { text: "unable to receive results", withErrno: true },
  119: { text: "the client has terminated", withErrno: false },
  120: { text: "the server has terminated", withErrno: false },
  121: { text: "the server is busy running a test. try again later", withErrno: false },
  122: { text: "unable to set TCP/SCTP NODELAY", withErrno: true },
  123: { text: "unable to set TCP/SCTP MSS", withErrno: true },
  124: { text: "unable to set socket buffer size", withErrno: true },
  125: { text: "unable to set IP TOS", withErrno: true },
  128: { text: "unable to reuse address on socket", withErrno: true },
  131: { text: "protocol does not exist", withErrno: false },
  // 3.12 says this whatever the errno.
  134: { text: "unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host", withErrno: false },
  136: { text: "Unable to set/reset IPV6_V6ONLY", withErrno: true },
  142: { text: "test authorization failed", withErrno: false },
  144: { text: "idle timeout for receiving data", withErrno: false },
  200: { text: "unable to create a new stream", withErrno: true },
  201: { text: "unable to initialize stream", withErrno: true },
  202: { text: "unable to start stream listener", withErrno: true },
  203: { text: "unable to connect stream", withErrno: true },
  204: { text: "unable to accept stream connection", withErrno: true },
  205: { text: "unable to write to stream socket", withErrno: true },
  206: { text: "unable to read from stream socket", withErrno: true },
  207: { text: "stream socket has closed unexpectedly", withErrno: false },
  208: { text: "stream has an invalid id", withErrno: false },
};

/** What a 3.12 peer prints after "iperf3: error - " for this i_errno/errno pair. */
export function describeIperfError(iErrno: number, errno: number): string {
  const t = TEXT[iErrno];
  if (!t) return `int_errno=${iErrno}: ${strerror(errno)}`;
  return t.withErrno ? `${t.text}: ${strerror(errno)}` : t.text;
}
