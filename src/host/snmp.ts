/** Section name ("Tcp", "Udp", "TcpExt", ...) -> counter name -> value. */
export type SnmpTables = Record<string, Record<string, number>>;

/**
 * Parses /proc/net/snmp and /proc/net/netstat, which share a layout: each section is a line of names followed by a
 * line of values, both prefixed with "Section:". A line of values is matched to the names line just before it.
 */
export function parseSnmp(text: string): SnmpTables {
  const out: SnmpTables = {};
  let pending: { section: string; names: string[] } | undefined;
  for (const line of text.split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const section = line.slice(0, colon);
    const fields = line.slice(colon + 1).trim().split(/\s+/).filter((f) => f !== "");
    const numeric = fields.length > 0 && fields.every((f) => /^-?\d+$/.test(f));
    if (!numeric) {
      pending = { section, names: fields };
      continue;
    }
    if (pending?.section !== section) continue;
    const table: Record<string, number> = (out[section] ??= {});
    pending.names.forEach((name, i) => {
      const v = fields[i];
      if (v !== undefined) table[name] = Number(v);
    });
    pending = undefined;
  }
  return out;
}
