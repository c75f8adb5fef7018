import { z } from "zod";
import { UserError } from "../errors.ts";

/**
 * `--label KEY=VALUE`: who this process is in a fleet (node, pod, zone, pair...). Global like --http, so every mode
 * carries the same identity into /metrics, /status, /results and --json. Names follow Prometheus' label grammar and
 * may not shadow the labels anyperf itself puts on a series, or two series would merge under one name.
 */

const MAX_LABELS = 16;
const MAX_VALUE = 256;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** Labels anyperf sets on its own series (metrics.ts) and the target labels Prometheus adds itself. */
const RESERVED = new Set(["dialect", "role", "test", "peer", "stream", "side", "phase", "quantile", "scope", "le", "job", "instance", "mode", "direction", "version", "revision"]);

export const Labels = z.record(z.string().regex(NAME), z.string().max(MAX_VALUE));
export type Labels = z.infer<typeof Labels>;

function parseLabel(text: string): [string, string] {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new UserError(`--label ${text}: write KEY=VALUE, e.g. --label node=worker-1`, 2);
  const name = text.slice(0, eq);
  const value = text.slice(eq + 1);
  if (!NAME.test(name) || name.startsWith("__")) {
    throw new UserError(`--label ${text}: "${name}" is not a label name; use letters, digits and _ (not first a digit, not __), up to 63 characters`, 2);
  }
  if (RESERVED.has(name)) throw new UserError(`--label ${text}: anyperf or Prometheus sets "${name}" itself; pick another name`, 2);
  if (value.length > MAX_VALUE) throw new UserError(`--label ${name}=...: the value has ${value.length} characters; keep it to ${MAX_VALUE}`, 2);
  return [name, value];
}

/** Every --label, in order; a name given twice is a mistake worth naming. */
export function parseLabels(texts: readonly string[]): Labels {
  if (texts.length > MAX_LABELS) throw new UserError(`${texts.length} --label options: pass at most ${MAX_LABELS}`, 2);
  const out: Labels = {};
  for (const t of texts) {
    const [k, v] = parseLabel(t);
    if (k in out) throw new UserError(`--label ${k} given twice: pass each name once`, 2);
    out[k] = v;
  }
  return out;
}

/**
 * Without --label, a pod names itself from the Downward API: POD_NAME and NODE_NAME (metadata.name, spec.nodeName).
 * Values too long or empty are left out rather than refused: the environment is not the user's typing.
 */
export function labelsFromEnv(env: Record<string, string | undefined>): Labels {
  const out: Labels = {};
  for (const [label, variable] of [["pod", "POD_NAME"], ["node", "NODE_NAME"]] as const) {
    const v = env[variable];
    if (v !== undefined && v !== "" && v.length <= MAX_VALUE) out[label] = v;
  }
  return out;
}

let processLabels: Labels = {};

/** Set once by main.ts before the mode runs. */
export function setProcessLabels(labels: Labels): void {
  processLabels = { ...labels };
}

export function getProcessLabels(): Labels {
  return processLabels;
}

/** Takes every `--label KEY=VALUE` (or `--label=KEY=VALUE`) out of argv before the mode parses it. */
export function takeLabelOptions(argv: string[], env: Record<string, string | undefined>): { rest: string[]; labels: Labels } {
  const rest: string[] = [];
  const texts: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith("--label=")) texts.push(a.slice("--label=".length));
    else if (a === "--label") {
      const v = argv[++i];
      if (v === undefined) throw new UserError("--label needs a value: --label KEY=VALUE", 2);
      texts.push(v);
    } else rest.push(a);
  }
  return { rest, labels: texts.length ? parseLabels(texts) : labelsFromEnv(env) };
}
