/**
 * One embedded server's output on our stdout: whole lines, each tagged with the server's name, so lines of servers
 * running side by side never mix. Held back until open(): a server's own start banner repeats the listener line.
 */
export function lineSink(tag: string): { write(text: string): void; open(): void } {
  let partial = "";
  let opened = false;
  return {
    write(text: string) {
      const lines = (partial + text).split("\n");
      partial = lines.pop()!;
      if (!opened || lines.length === 0) return;
      process.stdout.write(lines.map((l) => `[${tag}] ${l}\n`).join(""));
    },
    open() {
      opened = true;
    },
  };
}
