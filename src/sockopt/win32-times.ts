/**
 * CPU times on Windows through bun:ffi (kernel32, ntdll): what /proc/stat and /proc/self/stat give on Linux. Loaded
 * once, before any sampler is made (createHostSampler is synchronous and bun:ffi only comes by a dynamic import).
 */

export interface Win32Times {
  /** SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION per CPU, raw (see src/host/windows-times.ts). */
  processors(): BigUint64Array;
  /** This process's kernel and user time, 100 ns units. */
  process(): { kernel: bigint; user: bigint };
}

/** NtQuerySystemInformation class SystemProcessorPerformanceInformation. */
const PROCESSOR_PERFORMANCE = 8;
/** 64-bit words per CPU in that class's record: Idle, Kernel, User, Dpc, Interrupt times, then InterruptCount. */
export const PROCESSOR_RECORD_WORDS = 6;
/** Windows groups hold at most 64 CPUs; the call reports those of the caller's group. */
const MAX_CPUS = 64;

let loaded: Win32Times | undefined;

/** The loaded functions, or undefined when not on Windows under Bun or when the call failed. */
export function win32Times(): Win32Times | undefined {
  return loaded;
}

export async function loadWin32Times(): Promise<Win32Times | undefined> {
  if (loaded || typeof Bun === "undefined" || process.platform !== "win32") return loaded;
  try {
    const { dlopen, ptr } = await import("bun:ffi");
    const k = dlopen("kernel32.dll", {
      GetCurrentProcess: { args: [], returns: "ptr" },
      GetProcessTimes: { args: ["ptr", "ptr", "ptr", "ptr", "ptr"], returns: "i32" },
    }).symbols;
    const n = dlopen("ntdll.dll", {
      NtQuerySystemInformation: { args: ["i32", "ptr", "u32", "ptr"], returns: "i32" },
    }).symbols;
    const buf = new BigUint64Array(PROCESSOR_RECORD_WORDS * MAX_CPUS);
    const len = new Uint32Array(1);
    const times = new BigUint64Array(4);
    const self = k.GetCurrentProcess();
    const t = {
      processors() {
        if (n.NtQuerySystemInformation(PROCESSOR_PERFORMANCE, ptr(buf), buf.byteLength, ptr(len)) !== 0) return new BigUint64Array(0);
        return buf.slice(0, len[0]! / 8);
      },
      process() {
        if (!k.GetProcessTimes(self, ptr(times), ptr(times, 8), ptr(times, 16), ptr(times, 24))) return { kernel: 0n, user: 0n };
        return { kernel: times[2]!, user: times[3]! };
      },
    };
    if (t.processors().length === 0) return undefined;
    loaded = t;
  } catch {
    loaded = undefined;
  }
  return loaded;
}
