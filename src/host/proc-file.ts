import { Buffer } from "node:buffer";
import { closeSync, openSync, readSync } from "node:fs";

const MAX_BYTES = 64 * 1024 * 1024;

/**
 * A /proc file kept open and re-read with pread at offset 0: the kernel regenerates the text on every read, and
 * skipping open/close makes a sample 1.5–4x cheaper (runtime notes, Recipe R8). The buffer grows when a read fills
 * it, because /proc/interrupts and /proc/net/udp grow with CPUs and sockets.
 */
export class ProcFile {
  #buf: Buffer;

  private constructor(
    readonly path: string,
    private fd: number,
    initialBytes: number,
  ) {
    this.#buf = Buffer.alloc(initialBytes);
  }

  /** undefined when the file does not exist or cannot be opened (not Linux, hidepid, a kernel without it). */
  static open(path: string, initialBytes = 16 * 1024): ProcFile | undefined {
    try {
      return new ProcFile(path, openSync(path, "r"), initialBytes);
    } catch {
      return undefined;
    }
  }

  /** The whole file as text, or undefined when the read fails (file closed, file gone). */
  read(): string | undefined {
    if (this.fd < 0) return undefined;
    for (;;) {
      let n = 0;
      try {
        for (;;) {
          const got = readSync(this.fd, this.#buf, n, this.#buf.length - n, n);
          if (got === 0) break;
          n += got;
          if (n === this.#buf.length) break;
        }
      } catch {
        return undefined;
      }
      if (n < this.#buf.length) return this.#buf.toString("latin1", 0, n);
      // Full buffer: the text may be cut; read again from the start so one generation of the file is parsed.
      if (this.#buf.length >= MAX_BYTES) return undefined;
      this.#buf = Buffer.alloc(this.#buf.length * 2);
    }
  }

  close(): void {
    if (this.fd < 0) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed by someone else: nothing to release
    }
    this.fd = -1;
  }
}
