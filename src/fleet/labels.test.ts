import { describe, expect, test } from "bun:test";
import { UserError } from "../errors.ts";
import { labelsFromEnv, parseLabels, takeLabelOptions } from "./labels.ts";

function refused(texts: string[]): string {
  try {
    parseLabels(texts);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as Error).message;
  }
  throw new Error("accepted");
}

describe("--label", () => {
  test("KEY=VALUE pairs in order; the value may hold = and be empty", () => {
    expect(parseLabels(["node=worker-1", "zone=a=b", "empty="])).toEqual({ node: "worker-1", zone: "a=b", empty: "" });
  });

  test("names follow Prometheus' grammar, not reserved, not twice; values bounded", () => {
    expect(refused(["1node=x"])).toContain("not a label name");
    expect(refused(["no-dash=x"])).toContain("not a label name");
    expect(refused(["__name=x"])).toContain("not a label name");
    expect(refused(["novalue"])).toContain("KEY=VALUE");
    expect(refused(["=x"])).toContain("KEY=VALUE");
    expect(refused(["peer=x"])).toContain("pick another name");
    expect(refused(["instance=x"])).toContain("pick another name");
    expect(refused(["a=1", "a=2"])).toContain("--label a given twice");
    expect(refused([`a=${"v".repeat(257)}`])).toContain("keep it to 256");
    expect(refused(Array.from({ length: 17 }, (_, i) => `l${i}=x`))).toContain("at most 16");
  });

  test("taken out of argv wherever they stand, both spellings; the rest is left in order", () => {
    const { rest, labels } = takeLabelOptions(["-s", "--label", "node=a", "-p", "5201", "--label=pair=3"], { POD_NAME: "ignored" });
    expect(rest).toEqual(["-s", "-p", "5201"]);
    expect(labels).toEqual({ node: "a", pair: "3" });
    expect(() => takeLabelOptions(["--label"], {})).toThrow("--label needs a value");
  });

  test("without --label, a pod names itself from POD_NAME and NODE_NAME; outside one, no labels", () => {
    expect(takeLabelOptions(["-s"], { POD_NAME: "anyperf-serve-x7k2p", NODE_NAME: "worker-3" }).labels).toEqual({ pod: "anyperf-serve-x7k2p", node: "worker-3" });
    expect(labelsFromEnv({ NODE_NAME: "worker-3", POD_NAME: "" })).toEqual({ node: "worker-3" });
    expect(labelsFromEnv({})).toEqual({});
  });
});
