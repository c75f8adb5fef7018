/** "host port N" as the refusal lines print a peer (an IPv4 peer on a dual-stack socket without its ::ffff: prefix). */
export function peerText(host: string | undefined, port: number | undefined): string {
  const h = host === undefined ? "?" : /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(host) ? host.slice(7) : host;
  return `${h} port ${port ?? 0}`;
}
