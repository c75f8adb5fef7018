import { describe, expect, test } from "bun:test";
import { parseInterrupts } from "./interrupts.ts";
import { fixture } from "./testdata/fixture.ts";

describe("parseInterrupts", () => {
  test("captured x86 /proc/interrupts (2 CPUs)", () => {
    const r = parseInterrupts(fixture("proc-interrupts.txt"));
    expect(r?.cpus).toBe(2);
    expect(r?.lines.length).toBe(35);
    expect(r?.lines[0]).toEqual({ id: "24", count: 1, description: "IO-APIC 5-edge ACPI:Ged" });
    expect(r?.lines.find((l) => l.id === "LOC")).toEqual({ id: "LOC", count: 71527 + 67337, description: "Local timer interrupts" });
    expect(r?.lines.find((l) => l.id === "ERR")).toEqual({ id: "ERR", count: 0, description: "" });
    // numbered lines 65350 + LOC 138864 + IWI 1 + RES 17157 + CAL 96853 + TLB 6869 + HYP 124
    expect(r?.lines.reduce((s, l) => s + l.count, 0)).toBe(325218);
  });

  test("hand-written ARM layout: 4 CPUs, a short row, a lone error count", () => {
    const r = parseInterrupts(fixture("proc-interrupts-arm.txt"));
    expect(r?.cpus).toBe(4);
    expect(r?.lines).toEqual([
      { id: "11", count: 123456 + 23456 + 3456 + 456, description: "GICv3 27 Level arch_timer" },
      { id: "47", count: 8, description: "GICv3 72 Level eth0, eth0-rx" },
      { id: "IPI0", count: 1000, description: "Rescheduling interrupts" },
      { id: "IPI1", count: 3, description: "Function call interrupts" },
      { id: "Err", count: 9, description: "" },
    ]);
  });

  test("no CPU header -> undefined", () => {
    expect(parseInterrupts("")).toBeUndefined();
    expect(parseInterrupts(" 0: 1 2 timer\n")).toBeUndefined();
  });
});
