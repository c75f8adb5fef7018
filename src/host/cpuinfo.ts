/**
 * The `cpu MHz` value of every processor in /proc/cpuinfo, in file order. Empty where the kernel does not print it
 * (most ARM kernels), so callers treat the speed as unknown rather than 0.
 */
export function parseCpuMhz(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/^cpu MHz\s*:\s*([0-9.]+)\s*$/gm)) {
    const v = Number(m[1]);
    if (Number.isFinite(v) && v > 0) out.push(v);
  }
  return out;
}
