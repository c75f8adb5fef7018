/** An IPv4 peer on a dual-stack socket without its ::ffff: prefix; any other address as it is. */
export function plainAddress(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}

/** "host port N" as the refusal lines print a peer. */
export function peerText(host: string | undefined, port: number | undefined): string {
  return `${host === undefined ? "?" : plainAddress(host)} port ${port ?? 0}`;
}
