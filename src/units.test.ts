import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { UserError } from "./errors.ts";
import { formatBits, formatBytes, formatCount, formatFixed, formatIperf, parseRate, parseSize } from "./units.ts";

const testdata = (name: string) => readFileSync(new URL(`./testdata/units/${name}`, import.meta.url), "utf8");

function userError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (e) {
    if (e instanceof UserError) return e;
    throw e;
  }
  throw new Error("no UserError thrown");
}

describe("parseSize", () => {
  test("1024-based, case-insensitive (iperf3 -l/-n/-w, ntttcp -b)", () => {
    const o = { base: 1024 } as const;
    expect(parseSize("128K", o)).toBe(131072);
    expect(parseSize("64k", o)).toBe(65536);
    expect(parseSize("1M", o)).toBe(1048576);
    expect(parseSize("2g", o)).toBe(2 * 1024 ** 3);
    expect(parseSize("1T", o)).toBe(1024 ** 4);
    expect(parseSize("1.5M", o)).toBe(1572864);
    expect(parseSize("1.3K", o)).toBe(1331); // 1331.2 truncated, as the peers' (int) casts do
    expect(parseSize("65536", o)).toBe(65536);
    expect(parseSize("0", o)).toBe(0);
    expect(parseSize(".5K", o)).toBe(512);
    expect(parseSize("1e3", o)).toBe(1000);
    expect(parseSize(" 64K ", o)).toBe(65536);
    expect(parseSize("64KB", o)).toBe(65536);
    expect(parseSize("100B", o)).toBe(100);
  });

  test("1000-based, and IEC suffixes are always binary", () => {
    expect(parseSize("1M", { base: 1000 })).toBe(1e6);
    expect(parseSize("4kB", { base: 1000 })).toBe(4000);
    expect(parseSize("4KiB", { base: 1000 })).toBe(4096);
    expect(parseSize("2MiB", { base: "case" })).toBe(2 * 1048576);
  });

  test("case: uppercase binary, lowercase decimal (iperf 2, netperf)", () => {
    const o = { base: "case" } as const;
    expect(parseSize("10M", o)).toBe(10485760);
    expect(parseSize("2m", o)).toBe(2000000);
    expect(parseSize("100k", o)).toBe(100000);
    expect(parseSize("100K", o)).toBe(102400);
    expect(parseSize("1G", o)).toBe(1073741824);
    expect(parseSize("1g", o)).toBe(1e9);
  });

  test("what the stock iperf3 client put on the wire for -l 32K and -n 1M", () => {
    for (const [file, option, key] of [
      ["iperf3-blocks-k-control.txt", "-l", "len"],
      ["iperf3-bytes-n-control.txt", "-n", "num"],
    ] as const) {
      const text = testdata(file);
      const arg = new RegExp(`CMD client: .* ${option} (\\S+)`).exec(text)![1]!;
      const params = JSON.parse(iperf3Json(text, "client")[0]!) as Record<string, number>;
      expect(parseSize(arg, { base: 1024 })).toBe(params[key]!);
    }
  });

  test("errors name the text, the option and the expected form", () => {
    for (const bad of ["", "abc", "12x", "-5", "1.2.3", "K", "12 K", "1e400", "0x10", "5KK"]) {
      const e = userError(() => parseSize(bad, { base: 1024 }));
      expect(e.message).toContain(`"${bad}"`);
      expect(e.message).toContain("e.g. 128K");
      expect(e.exitCode).toBe(2);
    }
    const e = userError(() => parseSize("12x", { base: "case", option: "-l" }));
    expect(e.message.startsWith('-l "12x" is not a size: ')).toBe(true);
    expect(e.message).toContain("×1000ⁿ");
    expect(userError(() => parseSize("1e30", { base: 1024 })).message).toContain("too large");
  });
});

describe("parseRate", () => {
  test("SI by default (iperf3 -b, ntttcp -B)", () => {
    expect(parseRate("100M")).toEqual({ bitsPerSecond: 100e6 });
    expect(parseRate("100m")).toEqual({ bitsPerSecond: 100e6 });
    expect(parseRate("1.5g")).toEqual({ bitsPerSecond: 1.5e9 });
    expect(parseRate("2T")).toEqual({ bitsPerSecond: 2e12 });
    expect(parseRate("8000")).toEqual({ bitsPerSecond: 8000 });
    expect(parseRate("10Mbps")).toEqual({ bitsPerSecond: 10e6 });
    expect(parseRate("10Mbit/s")).toEqual({ bitsPerSecond: 10e6 });
    expect(parseRate("0")).toEqual({ bitsPerSecond: 0 });
  });

  test("iperf 2: uppercase binary, lowercase decimal, pps", () => {
    const o = { base: "case" } as const;
    expect(parseRate("10M", o)).toEqual({ bitsPerSecond: 10485760 });
    expect(parseRate("2m", o)).toEqual({ bitsPerSecond: 2000000 });
    expect(parseRate("100k", o)).toEqual({ bitsPerSecond: 100000 });
    expect(parseRate("1000pps", o)).toEqual({ packetsPerSecond: 1000 });
    expect(parseRate("10kpps", o)).toEqual({ packetsPerSecond: 10000 });
    expect(parseRate("1000PPS")).toEqual({ packetsPerSecond: 1000 });
  });

  test("what the stock iperf3 client put on the wire for -b", () => {
    for (const file of ["iperf3-tcp-control.txt", "iperf3-bytes-n-control.txt", "iperf3-udp-64bit-control.txt"]) {
      const text = testdata(file);
      const arg = /CMD client: .* -b (\S+)/.exec(text)![1]!;
      const params = JSON.parse(iperf3Json(text, "client")[0]!) as { bandwidth: number };
      expect(parseRate(arg).bitsPerSecond).toBe(params.bandwidth);
    }
  });

  test("errors", () => {
    for (const bad of ["", "fast", "-1M", "10X", "10 M", "pps", "1e999"]) {
      const e = userError(() => parseRate(bad, { option: "-b" }));
      expect(e.message.startsWith(`-b "${bad}" is not a rate: `)).toBe(true);
      expect(e.message).toContain("e.g. 100M");
      expect(e.exitCode).toBe(2);
    }
    const e = userError(() => parseRate("1000pps", { pps: false }));
    expect(e.message).not.toContain("e.g. 1000pps");
  });
});

describe("formatFixed", () => {
  test("matches glibc printf for ties, edge values and random doubles", () => {
    const lines = testdata("printf-glibc.txt").split("\n").filter((l) => l && !l.startsWith("#"));
    expect(lines.length).toBeGreaterThan(4000);
    const dv = new DataView(new ArrayBuffer(8));
    for (const line of lines) {
      const [bits, decimals, out] = line.split(" ") as [string, string, string];
      dv.setBigUint64(0, BigInt(`0x${bits}`));
      const value = dv.getFloat64(0);
      if (formatFixed(value, Number(decimals)) !== out) expect(`${value} %.${decimals}f -> ${formatFixed(value, Number(decimals))}`).toBe(out);
    }
  });

  test("hand-checked", () => {
    expect(formatFixed(4.625, 2)).toBe("4.62"); // exact tie, to even (toFixed says 4.63)
    expect(formatFixed(4.875, 2)).toBe("4.88");
    expect(formatFixed(2.5, 0)).toBe("2");
    expect(formatFixed(0.1, 20)).toBe("0.10000000000000000555");
    expect(formatFixed(-0.001, 2)).toBe("-0.00");
    expect(formatFixed(1.5, 2, 6)).toBe("  1.50");
    expect(formatFixed(1234.5, 1, 3)).toBe("1234.5");
    expect(formatFixed(NaN, 2, 5)).toBe("  nan");
    expect(formatFixed(-Infinity, 2)).toBe("-inf");
  });
});

describe("our own human formats", () => {
  test("formatBits", () => {
    expect(formatBits(9.41e9)).toBe("9.41 Gbit/s");
    expect(formatBits(941e6)).toBe("941 Mbit/s");
    expect(formatBits(94.1e6)).toBe("94.1 Mbit/s");
    expect(formatBits(999.7e6)).toBe("1.00 Gbit/s");
    expect(formatBits(9996)).toBe("10.0 kbit/s");
    expect(formatBits(0)).toBe("0 bit/s");
    expect(formatBits(512)).toBe("512 bit/s");
    expect(formatBits(12.5)).toBe("12.5 bit/s");
    expect(formatBits(1e9, { digits: 4 })).toBe("1.000 Gbit/s");
    expect(formatBits(1.23456e6, { digits: 2 })).toBe("1.2 Mbit/s");
    expect(formatBits(-2e6)).toBe("-2.00 Mbit/s");
    expect(formatBits(3e18)).toBe("3000 Pbit/s");
    expect(formatBits(NaN)).toBe("NaN bit/s");
  });

  test("formatBytes", () => {
    expect(formatBytes(1.1 * 2 ** 30)).toBe("1.10 GiB");
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(1048000)).toBe("1023 KiB"); // 1023.4 KiB, below 1024 so no carry
    expect(formatBytes(1048575)).toBe("1.00 MiB"); // 1023.999 KiB rounds to 1024: carried
    expect(formatBytes(5111808)).toBe("4.88 MiB");
    expect(formatBytes(0)).toBe("0 B");
  });

  test("formatCount", () => {
    expect(formatCount(950)).toBe("950");
    expect(formatCount(12345)).toBe("12.3 k");
    expect(formatCount(1.2e6, { unit: "pps" })).toBe("1.20 Mpps");
    expect(formatCount(950, { unit: "trans/s" })).toBe("950 trans/s");
    expect(formatCount(0.5)).toBe("0.500");
  });
});

/** JSON documents a side wrote on the control connection of an iperf3 capture (tshark follow,hex dump). */
function iperf3Json(text: string, side: "client" | "server"): string[] {
  const from = text.indexOf("Follow: tcp,hex");
  const to = text.indexOf("=====", from + 20);
  const bytes: number[] = [];
  for (const line of text.slice(from, to).split("\n")) {
    const m = /^(\t?)[0-9A-F]{8} {2}((?:[0-9a-f]{2} {1,2})+)/.exec(line);
    if (m && (m[1] === "\t") === (side === "server")) bytes.push(...m[2]!.trim().split(/\s+/).map((h) => parseInt(h, 16)));
  }
  const stream = Buffer.from(bytes).toString("latin1");
  return [...stream.matchAll(/\{"[^]*?\}(?=[^,\]}]|$)/g)].map((m) => m[0]);
}

interface Iperf3Stream {
  id: number;
  bytes: number;
  end_time: number;
  jitter: number;
}

/** Per-stream summary lines (not [SUM]) the stock client printed, by role. */
function summaryLines(text: string, role: "sender" | "receiver") {
  const client = text.slice(text.indexOf("### client"), text.indexOf("### server"));
  const tail = client.slice(client.indexOf("- - - -"));
  const out: { transfer: string; bitrate: string; jitter?: string }[] = [];
  for (const line of tail.split("\n")) {
    const m = /^\s*\[\s*\d+\]\s+[\d.]+-[\d.]+\s+sec\s+(.+?Bytes)\s+(.+?bits\/sec)\s+(?:([\d.]+) ms\s+)?.*\b(sender|receiver)\s*$/.exec(line);
    if (m && m[4] === role) out.push({ transfer: m[1]!, bitrate: m[2]!, jitter: m[3] });
  }
  return out;
}

describe("formatIperf", () => {
  test("hand-checked, iperf3 3.12", () => {
    expect(formatIperf(0, "A")).toBe("0.00 Byte");
    expect(formatIperf(1000, "A")).toBe("1000 Byte"); // below 1024: no prefix, %4.0f
    expect(formatIperf(1000, "a")).toBe("8.00 Kbit"); // 8000 bits
    expect(formatIperf(655360, "A")).toBe(" 640 KByte");
    expect(formatIperf(1179648, "A")).toBe("1.12 MByte"); // exactly 1.125 MiB: printf rounds the tie to even
    expect(formatIperf(1441852, "A")).toBe("1.38 MByte"); // exactly 1.375 MiB
    expect(formatIperf(131072, "K")).toBe(" 128 KByte");
    expect(formatIperf(131072, "k")).toBe("1049 Kbit"); // 1048576 bits / 1000
    expect(formatIperf(125000, "m")).toBe("1.00 Mbit");
    expect(formatIperf(1250, "m")).toBe("0.01 Mbit");
    expect(formatIperf(1.5e12, "A")).toBe("1.36 TByte");
    expect(formatIperf(2e15, "A")).toBe("1819 TByte"); // iperf3 stops at tera
    expect(formatIperf(125e12, "p")).toBe("1000 Tbit"); // no peta letter in iperf3: adaptive
    expect(formatIperf(-2048, "A")).toBe("-2048.00 Byte"); // iperf3 adapts on the signed value
    expect(formatIperf(1e6, "?")).toBe("8.00 Mbit"); // unknown letter, not upper case: adaptive bits
    expect(formatIperf(131072 * 8, "X")).toBe("1.00 MByte"); // unknown upper-case letter: adaptive bytes
  });

  test("hand-checked, iperf 2.1.8", () => {
    expect(formatIperf(0, "A", "iperf2")).toBe("0.000 Byte");
    expect(formatIperf(1250, "m", "iperf2")).toBe("0.010 Mbit");
    expect(formatIperf(1470, "A", "iperf2")).toBe("1.44 KByte");
    expect(formatIperf(212992, "A", "iperf2")).toBe(" 208 KByte");
    expect(formatIperf(2e15, "A", "iperf2")).toBe("1.78 PByte");
    expect(formatIperf(125e12, "p", "iperf2")).toBe("1.00 Pbit");
    expect(formatIperf(-2048, "A", "iperf2")).toBe("-2.00 KByte");
  });

  test("iperf3 captures: summary lines from the results both sides exchanged", () => {
    const files = [
      "iperf3-tcp-control.txt",
      "iperf3-reverse-control.txt",
      "iperf3-omit-control.txt",
      "iperf3-bytes-n-control.txt",
      "iperf3-blocks-k-control.txt",
      "iperf3-udp-control.txt",
      "iperf3-udp-64bit-control.txt",
      "iperf3-udp-reverse-control.txt",
      "iperf3-parallel2-control.txt",
    ];
    let checked = 0;
    for (const file of files) {
      const text = testdata(file);
      const reverse = /CMD client: .* -R\b/.test(text);
      const results = (side: "client" | "server") =>
        (JSON.parse(iperf3Json(text, side).find((j) => j.startsWith('{"cpu_util_total"'))!) as { streams: Iperf3Stream[] }).streams;
      // The sending side's results give the "sender" lines, the receiving side's the "receiver" lines.
      const bySide = { sender: results(reverse ? "server" : "client"), receiver: results(reverse ? "client" : "server") };
      for (const role of ["sender", "receiver"] as const) {
        const lines = summaryLines(text, role);
        expect(lines.length).toBe(bySide[role].length);
        bySide[role].forEach((s, i) => {
          const line = lines[i]!;
          expect(`${file} ${formatIperf(s.bytes, "A").trim()}s`).toBe(`${file} ${line.transfer}`);
          expect(`${file} ${formatIperf(s.bytes / s.end_time, "a").trim()}s/sec`).toBe(`${file} ${line.bitrate}`);
          // UDP: the receiver's jitter; sender lines always show 0 (the 3.12 server even sends its jitter as sender).
          if (line.jitter !== undefined) expect(formatFixed(role === "receiver" ? s.jitter * 1000 : 0, 3)).toBe(line.jitter);
          checked++;
        });
      }
    }
    expect(checked).toBe(20);
  });

  test("iperf 2 capture: the client's Server Report line from the report datagram", () => {
    const text = testdata("iperf2-udp.txt");
    const hex = [...text.matchAll(/^ {2}00[0-7]0: ([0-9a-f]{32})$/gm)].map((m) => m[1]).join("");
    const word = (off: number) => parseInt(hex.slice(off * 2, off * 2 + 8), 16);
    const bytes = word(20) * 2 ** 32 + word(24);
    const seconds = word(28) + word(32) / 1e6;
    const jitterMs = (word(48) + word(52) / 1e6) * 1000;
    const line = /Server Report:\n.*\n\s*\[\s*1\] [\d.]+-[\d.]+ sec\s+(.+?Bytes)\s+(.+?bits\/sec)\s+([\d.]+) ms/.exec(text)!;
    expect(bytes).toBe(136710);
    expect(`${formatIperf(bytes, "A", "iperf2").trim()}s`).toBe(line[1]!);
    expect(`${formatIperf(bytes / seconds, "a", "iperf2").trim()}s/sec`).toBe(line[2]!);
    expect(formatFixed(jitterMs, 3)).toBe(line[3]!);
  });
});
