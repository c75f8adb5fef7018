import { readFileSync } from "node:fs";

/** CPUs named by a kernel cpu list ("0-2,5" is 0, 1, 2 and 5). */
export function cpuList(text: string): number[] {
  return text.split(",").flatMap((r) => {
    const [a, b = a] = r.split("-").map(Number) as [number, number?];
    return Array.from({ length: (b as number) - a + 1 }, (_, i) => a + i);
  });
}

/** The Cpus_allowed_list of a /proc status file, as the kernel writes it. */
export const allowedOf = (path: string): string => readFileSync(path, "latin1").match(/^Cpus_allowed_list:\s*(\S+)/m)![1]!;
