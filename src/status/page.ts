/**
 * GET /: the live page, served from the binary as one string (no build step, no CDN). It reads /status once a
 * second and /events as it comes (through fetch, because EventSource cannot send the Authorization header), and
 * shows /chart.svg, the shown test's throughput drawn on the server by the report's chart code (live-chart.ts),
 * fetched again at every interval and every poll. Once the test is done it shows both ends from /results/<id> (the
 * remote half, the diagnosis) and /results/<id>/cpu.svg (CPU per core at each end). While /status holds a
 * measurement of several tests (--responsiveness), it shows /measurement.svg too: the load's throughput above the
 * probe's latency over the whole run, and the probe's latest round trip among the figures. The SVG is parsed as XML (DOMParser runs no script in it) and
 * swapped in. With --http-token, open it as /#token=TOKEN: the fragment
 * never leaves the browser, and the page sends it as a Bearer header. Every figure is set with textContent, never
 * as HTML, since peers' names come from the network.
 */

export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>anyperf live</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.2em; color: #222; background: #fafafa; }
  h1 { font-size: 1.3em; margin: 0 0 .4em; }
  .badge { display: inline-block; padding: .1em .6em; border-radius: .8em; background: #ddd; margin-left: .4em; }
  .badge.measuring { background: #bde5bd; } .badge.warm-up, .badge.cool-down { background: #f3e3a8; }
  .badge.done { background: #c9d8f0; } .badge.waiting { background: #e4e4e4; }
  #figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(11em, 1fr)); gap: .5em; margin: .8em 0; }
  .fig { background: #fff; border: 1px solid #ddd; border-radius: .4em; padding: .4em .6em; }
  .fig .k { color: #666; font-size: .85em; } .fig .v { font-size: 1.25em; font-variant-numeric: tabular-nums; }
  #chart svg { width: 100%; max-width: 60em; height: auto; background: #fff; border: 1px solid #ddd; border-radius: .4em; }
  table { border-collapse: collapse; margin: .5em 0; background: #fff; }
  th, td { border: 1px solid #ddd; padding: .2em .6em; text-align: right; font-variant-numeric: tabular-nums; }
  th { background: #f0f0f0; } #error { color: #a00; }
  #end .diagnosis { background: #fff; border-left: 4px solid #1f77b4; padding: .4em .8em; max-width: 60em; }
  #measurement svg { width: 100%; max-width: 60em; height: auto; background: #fff; border: 1px solid #ddd; border-radius: .4em; }
  #livecores svg { width: 100%; max-width: 40em; height: auto; background: #fff; border: 1px solid #ddd; border-radius: .4em; }
  #cores svg { width: 100%; max-width: 80em; height: auto; background: #fff; border: 1px solid #ddd; border-radius: .4em; }
</style>
</head>
<body>
<h1>anyperf <span id="mode">…</span><span id="phase" class="badge">…</span></h1>
<div id="where"></div>
<div id="error"></div>
<div id="figures"></div>
<div id="chart" data-points="0" data-test=""></div>
<div id="measurement" data-probe="0" data-load="0" data-phase=""></div>
<div id="livecores"></div>
<div id="end"></div>
<h2>Streams</h2>
<table id="streams"><thead><tr></tr></thead><tbody></tbody></table>
<h2>Recent tests</h2>
<table id="recent"><thead><tr><th>test</th><th>mode</th><th>role</th><th>peer</th><th>phase</th><th>started</th><th>average</th><th>results</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const headers = token ? { Authorization: "Bearer " + token } : {};
const $ = (id) => document.getElementById(id);

function rate(bps, unit) {
  if (bps === undefined || bps === null) return "–";
  if (bps === 0) return "0 " + unit;
  const steps = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [f, p] of steps) if (bps >= f) return (bps / f).toFixed(2) + " " + p + unit;
  return bps.toFixed(bps < 10 ? 2 : 0) + " " + unit;
}
function bytes(n) {
  const steps = [[2 ** 40, "TiB"], [2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]];
  for (const [f, u] of steps) if (n >= f) return (n / f).toFixed(2) + " " + u;
  return n + " B";
}
function secs(s) { return s === null || s === undefined ? "–" : s.toFixed(1) + " s"; }
function us(v) { return v === undefined ? "–" : v < 1000 ? v.toFixed(1) + " µs" : (v / 1000).toFixed(2) + " ms"; }

function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
function head(id, names) {
  $(id).tHead.rows[0].replaceChildren(...names.map((n) => el("th", n)));
}
function rows(id, list) {
  const body = $(id).tBodies[0];
  body.replaceChildren(...list.map((cells) => {
    const tr = el("tr");
    for (const c of cells) tr.append(c instanceof Node ? (() => { const td = el("td"); td.append(c); return td; })() : el("td", String(c)));
    return tr;
  }));
}

let charting = false;
let shownRunning = false;
let measuring = false;
let chartAgain = false;
// An SVG of the server's, parsed as XML (no script runs) and swapped into box; null when there is none.
async function swapSvg(path, box) {
  const res = await fetch(path, { headers, cache: "no-store" });
  if (!res.ok) return null;
  const svg = new DOMParser().parseFromString(await res.text(), "image/svg+xml").documentElement;
  if (svg.nodeName !== "svg") return null;
  box.replaceChildren(document.importNode(svg, true));
  return svg;
}
async function refreshChart() {
  if (charting) { chartAgain = true; return; }
  charting = true;
  try {
    const svg = await swapSvg("chart.svg", $("chart"));
    if (svg) {
      $("chart").dataset.points = svg.getAttribute("data-points") || "0";
      $("chart").dataset.test = svg.getAttribute("data-test") || "";
    }
    // A measurement of several tests: its samples come with /status; the server draws them as /chart.svg's are.
    if (measuring) {
      const m = await swapSvg("measurement.svg", $("measurement"));
      if (m) for (const k of ["probe", "load", "phase"]) $("measurement").dataset[k] = m.getAttribute("data-" + k) || "";
    } else $("measurement").replaceChildren();
    // CPU per core over the last interval while the test runs; once it is done, both ends' below.
    if (shownRunning) await swapSvg("cpu.svg", $("livecores")); else $("livecores").replaceChildren();
  } catch (e) { /* the next poll tries again */ } finally {
    charting = false;
    if (chartAgain) { chartAgain = false; refreshChart(); }
  }
}

function figure(k, v) {
  const d = el("div", undefined, { class: "fig" });
  d.append(el("div", k, { class: "k" }), el("div", v, { class: "v" }));
  return d;
}
function render(doc) {
  const t = doc.test;
  $("mode").textContent = (t ? t.mode : doc.mode) + " (" + (t ? t.role : doc.role) + ")";
  $("phase").textContent = doc.phase;
  $("phase").className = "badge " + doc.phase;
  $("where").textContent = t ? "test " + t.id + (t.peer ? " with " + t.peer : "") + ", started " + new Date(t.startedAt).toLocaleTimeString() : "no test yet";
  const figs = [];
  if (t) {
    figs.push(figure("elapsed", secs(t.elapsedSeconds)), figure("remaining", secs(t.remainingSeconds)));
    figs.push(figure("throughput now", rate(t.throughput.current, "bit/s")), figure("average", rate(t.throughput.average, "bit/s")));
    if (t.packetsPerSecond) figs.push(figure("packets/s", rate(t.packetsPerSecond.current, "")));
    if (t.transactionsPerSecond) figs.push(figure("transactions/s", rate(t.transactionsPerSecond.current, "")));
    const l = t.latencyMicroseconds;
    if (l) figs.push(figure("latency p50 / p99", us(l.p50) + " / " + us(l.p99)), figure("latency p99.9", us(l.p999)));
    if (t.cpu) figs.push(figure("CPU host / process", t.cpu.busyPercent.toFixed(0) + "% / " + t.cpu.processPercent.toFixed(0) + "%"));
    if (t.retransmits !== undefined) figs.push(figure("retransmits", String(t.retransmits)));
    if (t.lost !== undefined) figs.push(figure("lost", String(t.lost)));
    figs.push(figure("bytes", bytes(t.bytes)));
  }
  const m = doc.measurement;
  measuring = Boolean(m);
  // The shown test of a measurement is one of its parts (the probe, a trickle of bytes): its chart shows the load's.
  $("chart").hidden = measuring;
  const tcp = m ? m.probe.filter((s) => s.transport === "tcp") : [];
  const probe = tcp.length ? tcp[tcp.length - 1] : null;
  if (probe) figs.push(figure(m.kind + " probe p50 / p99 (" + probe.phase + ")", us(probe.p50) + " / " + us(probe.p99)));
  $("figures").replaceChildren(...figs);
  shownRunning = Boolean(t && t.phase !== "done" && t.cpu && t.cpu.perCore);
  // Per stream only what the test counts: datagrams and loss for UDP, transactions for request/response (TCP has no
  // packet count of its own, and retransmits are the test's, in the figures above).
  const udp = Boolean(t && t.packetsPerSecond), rr = Boolean(t && t.transactionsPerSecond);
  head("streams", ["id", "side", "now", "average", "bytes", ...(udp ? ["datagrams", "lost"] : []), ...(rr ? ["transactions"] : [])]);
  rows("streams", t ? t.streams.map((s) => [s.id, s.side ?? "–", rate(s.bitsPerSecond, "bit/s"), rate(s.averageBitsPerSecond, "bit/s"),
    bytes(s.bytes), ...(udp ? [s.packets, s.lost ?? "–"] : []), ...(rr ? [s.transactions] : [])]) : []);
  rows("recent", doc.recent.map((r) => [r.id, r.mode, r.role, r.peer ?? "–", r.phase, new Date(r.startedAt).toLocaleTimeString(),
    rate(r.averageBitsPerSecond, "bit/s"), r.results ? el("a", "results", { href: r.results.slice(1) }) : "–"]));
  refreshChart();
  showEnd(t);
}

// Once the shown test is done: what its results say of both ends (the remote half comes with an anyperf client's
// results), the diagnosis, and CPU per core at each end. Fetched once per test.
let endOf = null;
function pct(v) { return v === undefined || v === null ? "–" : v.toFixed(1) + " %"; }
async function showEnd(t) {
  if (!t || t.phase !== "done") {
    if (endOf !== null) { endOf = null; $("end").replaceChildren(); }
    return;
  }
  if (endOf === t.id) return;
  endOf = t.id;
  try {
    const res = await fetch("results/" + encodeURIComponent(t.id), { headers, cache: "no-store" });
    const r = res.ok ? await res.json() : null;
    if (!r || typeof r !== "object") { endOf = null; return; }
    const parts = [el("h2", "When the run ended")];
    if (r.diagnosis) {
      const p = el("p", undefined, { class: "diagnosis" });
      p.append(el("b", r.diagnosis.verdict), document.createTextNode(": " + r.diagnosis.evidence.join(" ")));
      parts.push(p);
    }
    const ends = [["this end", r], ["remote end", r.remote]].filter(([, e]) => e && e.summary);
    if (ends.length) {
      const table = el("table", undefined, { id: "ends" });
      const hr = el("tr");
      for (const n of ["end", "role", "throughput", "CPU busy (all cores)", "anyperf CPU (1 core = 100 %)", "retransmits", "latency p50 / p99.9"]) hr.append(el("th", n));
      table.append(hr);
      for (const [name, e] of ends) {
        const l = e.summary.latency_us;
        const tr = el("tr");
        for (const c of [name, e.role ?? "–", rate(e.summary.throughput_bps, "bit/s"), pct(e.cpu && e.cpu.busy_percent), pct(e.cpu && e.cpu.process_percent),
          e.retransmits ?? "–", l ? us(l.p50) + " / " + us(l.p999) : "–"]) tr.append(el("td", String(c)));
        table.append(tr);
      }
      parts.push(table);
    }
    const cores = el("div", undefined, { id: "cores" });
    parts.push(cores);
    $("end").replaceChildren(...parts);
    await swapSvg("results/" + encodeURIComponent(t.id) + "/cpu.svg", cores);
  } catch (e) { endOf = null; /* the next poll tries again */ }
}

function problem(res) {
  $("error").textContent = res.status === 401
    ? "This status server needs its token: open " + location.pathname + "#token=TOKEN"
    : "status: HTTP " + res.status;
}
let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    const res = await fetch("status", { headers, cache: "no-store" });
    if (!res.ok) problem(res); else { $("error").textContent = ""; render(await res.json()); }
  } catch (e) {
    $("error").textContent = "status unreachable: " + e.message;
  } finally {
    polling = false;
  }
}

function onFrame(frame) {
  let event = "message";
  const data = [];
  for (const line of frame.split("\\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const c = line.indexOf(":");
    const k = c < 0 ? line : line.slice(0, c);
    let v = c < 0 ? "" : line.slice(c + 1);
    if (v.startsWith(" ")) v = v.slice(1);
    if (k === "event") event = v; else if (k === "data") data.push(v);
  }
  if (event !== "interval" || !data.length) return;
  // The chart and the figures follow each interval, not only the once-a-second poll.
  refreshChart();
  poll();
}
async function events() {
  try {
    const res = await fetch("events", { headers, cache: "no-store" });
    if (!res.ok) { problem(res); throw new Error("HTTP " + res.status); }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true }).replace(/\\r\\n?/g, "\\n");
      let i;
      while ((i = buf.indexOf("\\n\\n")) >= 0) { onFrame(buf.slice(0, i)); buf = buf.slice(i + 2); }
    }
  } catch (e) { /* reconnect below */ }
  setTimeout(events, 2000);
}
poll();
setInterval(poll, 1000);
events();
</script>
</body>
</html>
`;
