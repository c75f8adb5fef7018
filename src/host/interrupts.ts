export interface InterruptLine {
  /** The label before ':' — an IRQ number ("24") or a kind ("LOC", "NMI", "ERR"). */
  id: string;
  /** Sum over the CPU columns. */
  count: number;
  /** The rest of the line with runs of blanks collapsed (controller, trigger, device names). */
  description: string;
}

export interface Interrupts {
  /** CPU columns in the header (online CPUs). */
  cpus: number;
  lines: InterruptLine[];
}

/**
 * Parses /proc/interrupts. Rows carry one count per online CPU, except summary rows such as ERR and MIS which carry
 * one; counting numbers up to the CPU count and stopping at the first word handles both.
 */
export function parseInterrupts(text: string): Interrupts | undefined {
  const [header, ...rows] = text.split("\n");
  if (header === undefined) return undefined;
  const cpus = header.trim().split(/\s+/).filter((t) => /^CPU\d+$/.test(t)).length;
  if (cpus === 0) return undefined;
  const lines: InterruptLine[] = [];
  for (const row of rows) {
    const colon = row.indexOf(":");
    if (colon < 0) continue;
    const id = row.slice(0, colon).trim();
    const tokens = row.slice(colon + 1).trim().split(/\s+/).filter((t) => t !== "");
    let count = 0;
    let i = 0;
    for (; i < tokens.length && i < cpus && /^\d+$/.test(tokens[i] as string); i++) count += Number(tokens[i]);
    if (id === "" || i === 0) continue;
    lines.push({ id, count, description: tokens.slice(i).join(" ") });
  }
  return { cpus, lines };
}
