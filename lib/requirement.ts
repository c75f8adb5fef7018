import type { z } from "zod";

type Issue = z.core.$ZodIssue;

/** What the issue asks for, in words ("at most 65535", "above 0", "non-empty"). */
export function requirement(issue: Issue): string {
  switch (issue.code) {
    case "too_big":
      if (issue.origin === "string") return `at most ${String(issue.maximum)} characters long`;
      return issue.inclusive === false ? `below ${String(issue.maximum)}` : `at most ${String(issue.maximum)}`;
    case "too_small":
      if (issue.origin === "string") return Number(issue.minimum) === 1 ? "non-empty" : `at least ${String(issue.minimum)} characters long`;
      if (issue.origin === "array" || issue.origin === "set") return `at least ${String(issue.minimum)} item(s)`;
      return issue.inclusive === false ? `above ${String(issue.minimum)}` : `at least ${String(issue.minimum)}`;
    case "invalid_type":
      return issue.expected === "int" ? "a whole number" : `a ${issue.expected}`;
    case "not_multiple_of":
      return `a multiple of ${String(issue.divisor)}`;
    case "invalid_value":
      return `one of ${issue.values.map(String).join(", ")}`;
    default:
      return issue.message;
  }
}
