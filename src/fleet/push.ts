import { hostname } from "node:os";
import { UserError } from "../errors.ts";
import { jsonDocument } from "../report/json-numbers.ts";
import type { Results } from "../report/result.ts";
import { dialectOf, peerAddress, renderExposition, type Family } from "../status/metrics.ts";

/**
 * `--push URL` and `--pushgateway URL`: a client lives seconds, shorter than a scrape interval, so its final figures
 * are sent where they outlive it. A receiver that is down for a moment (a rolling restart) is retried; one that
 * refuses is reported in one line and the exit code says so, since the figures did not arrive.
 */

const RETRIES = 3;
const FIRST_BACKOFF_MS = 500;
const ATTEMPT_DEADLINE_MS = 10_000;

export interface PushTargets {
  push?: string;
  pushgateway?: string;
}

/** Checked before the test, so a typo does not cost a whole run. */
export function checkPushUrl(flag: string, text: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw new UserError(`${flag} ${text}: not an http:// or https:// URL; pass e.g. ${flag} http://collector:9091`, 2);
  return url;
}

/** One label of a grouping key in the URL path; a value with a slash (or none) goes base64url, as Pushgateway reads it. */
function groupingLabel(name: string, value: string): string {
  if (value !== "" && !value.includes("/")) return `${name}/${encodeURIComponent(value)}`;
  return `${name}@base64/${value === "" ? "=" : Buffer.from(value).toString("base64url")}`;
}

/**
 * Pushgateway's grouping key: job anyperf, instance the pod (or node) label, else this host's name, then every other
 * --label: one pod pushing several pairs (sender=..., receiver=...) keeps a group per pair, where a PUT to the same
 * group would replace the pair before.
 */
export function pushgatewayUrl(base: string, labels: Record<string, string>, host = hostname()): string {
  const instanceFrom = labels.pod !== undefined ? "pod" : labels.node !== undefined ? "node" : undefined;
  const key = [groupingLabel("job", "anyperf"), groupingLabel("instance", instanceFrom === undefined ? host : labels[instanceFrom]!)];
  for (const name of Object.keys(labels).sort()) if (name !== instanceFrom) key.push(groupingLabel(name, labels[name]!));
  return `${base.replace(/\/+$/, "")}/metrics/${key.join("/")}`;
}

/** The final figures in base units, named as /metrics names the live ones, labelled with --label and the test's identity. */
export function resultsExposition(r: Results): string {
  const labels: Record<string, string> = { ...r.labels, dialect: dialectOf(r.mode), role: r.role, ...(r.peer === undefined ? {} : { peer: peerAddress(r.peer) }) };
  const s = r.summary;
  const gauge = (name: string, help: string, value: number): Family => ({ name, type: "gauge", help, samples: [{ labels, value }] });
  const counter = (name: string, help: string, value: number): Family => ({ name, type: "counter", help, samples: [{ labels, value }] });
  const fams: Family[] = [
    gauge("anyperf_test_start_time_seconds", "Start of the test, seconds since the Unix epoch.", Date.parse(r.started_at) / 1000),
    gauge("anyperf_measured_seconds", "Length of the measured window.", s.seconds),
    counter("anyperf_bytes_total", "Payload bytes over the measured window (the reporting side).", s.bytes),
    gauge("anyperf_average_throughput_bytes_per_second", "Payload throughput over the measured window, bytes/s (x8 for bits/s).", s.throughput_bps / 8),
  ];
  if (s.packets_per_second !== undefined) fams.push(gauge("anyperf_packets_per_second", "Datagrams per second over the measured window.", s.packets_per_second));
  if (s.transactions_per_second !== undefined) fams.push(gauge("anyperf_transactions_per_second", "Transactions per second over the measured window.", s.transactions_per_second));
  if (s.lost !== undefined) fams.push(counter("anyperf_lost_packets_total", "UDP datagrams lost over the measured window.", s.lost));
  if (r.retransmits !== undefined) fams.push(counter("anyperf_retransmits_total", "TCP segments this test's sockets retransmitted over the measured window.", r.retransmits));
  return renderExposition(fams);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request with retries; the reason of the last failure, or undefined once it arrived. */
async function send(url: string, init: RequestInit, backoffMs: number): Promise<string | undefined> {
  let why = "";
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) await sleep(backoffMs * 2 ** (attempt - 1));
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(ATTEMPT_DEADLINE_MS) });
      if (res.ok) return undefined;
      const body = (await res.text()).replace(/\s+/g, " ").trim().slice(0, 200);
      why = `HTTP ${res.status}${body ? ` ${body}` : ""}`;
      // The receiver understood and refused: asking again changes nothing (but 429 and 5xx are passing states).
      if (res.status < 500 && res.status !== 429) break;
    } catch (e) {
      why = (e as Error).message;
    }
  }
  return why;
}

/** Sends the results where asked; one line per target that failed, naming its flag. */
export async function pushResults(targets: PushTargets, results: Results, backoffMs = FIRST_BACKOFF_MS): Promise<string[]> {
  const failed: string[] = [];
  const jobs: Promise<void>[] = [];
  if (targets.push !== undefined) {
    const url = targets.push;
    const body = jsonDocument(results, 0);
    jobs.push(send(url, { method: "POST", headers: { "Content-Type": "application/json" }, body }, backoffMs).then((why) => {
      if (why !== undefined) failed.push(`--push ${url}: results not delivered (${why}); check the URL and that the receiver is up`);
    }));
  }
  if (targets.pushgateway !== undefined) {
    const url = pushgatewayUrl(targets.pushgateway, results.labels ?? {});
    const body = resultsExposition(results);
    jobs.push(send(url, { method: "PUT", headers: { "Content-Type": "text/plain; version=0.0.4" }, body }, backoffMs).then((why) => {
      if (why !== undefined) failed.push(`--pushgateway ${targets.pushgateway}: figures not delivered to ${url} (${why}); check the URL and that the Pushgateway is up`);
    }));
  }
  await Promise.all(jobs);
  return failed;
}
