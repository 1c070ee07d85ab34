// etld console: reads the admin server's JSON through URLs relative to
// this page (so it works under any path prefix) and draws everything as
// plain DOM and SVG. Text from the server is only ever set as
// textContent, never parsed as HTML.
"use strict";

const API = "../pipelines";
const SVGNS = "http://www.w3.org/2000/svg";
const REFRESH_MS = 1000;

let selected = null; // name of the pipeline shown in detail
let planShown = null; // name whose plan is drawn
let lastPlan = null;
let sampling = false;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

async function getJSON(path, opts) {
  const r = await fetch(path, Object.assign({ cache: "no-store", credentials: "same-origin" }, opts || {}));
  if (r.status === 401) {
    // The token cookie is missing or wrong: the page itself shows the
    // sign-in form.
    location.reload();
    throw new Error("unauthorized");
  }
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()));
  return r.json();
}

function pipelinePath(name, what) {
  return API + "/" + encodeURIComponent(name) + "/" + what;
}

// The numbers of one pipeline, as the list shows them.
function totals(p) {
  const sum = (list, f) => (list || []).reduce((n, c) => n + f(c), 0);
  const comps = (p.sources || []).concat(p.sinks || []);
  const lags = (p.sources || []).filter((s) => s.lag !== undefined);
  return {
    rowsIn: sum(p.sources, (c) => c.rows_in),
    rowsOut: sum(p.sinks, (c) => c.rows_out),
    skipped: sum(comps, (c) => c.skipped - (c.dead_lettered || 0)),
    deadLettered: sum(comps, (c) => c.dead_lettered || 0),
    lag: lags.length ? String(sum(lags, (c) => c.lag)) : "–",
  };
}

function duration(seconds) {
  if (seconds < 60) return Math.floor(seconds) + "s";
  if (seconds < 3600) return Math.floor(seconds / 60) + "m " + (Math.floor(seconds) % 60) + "s";
  if (seconds < 86400) return Math.floor(seconds / 3600) + "h " + (Math.floor(seconds / 60) % 60) + "m";
  return Math.floor(seconds / 86400) + "d " + (Math.floor(seconds / 3600) % 24) + "h";
}

function since(iso) {
  return Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
}

function bytes(n) {
  return n + " B";
}

function cell(field, text, cls, value) {
  const td = el("td", { "data-field": field, text: text });
  if (cls) td.className = cls;
  if (value !== undefined) td.setAttribute("data-value", value);
  return td;
}

function checkpointCell(cp) {
  const td = el("td", { "data-field": "checkpoint" });
  if (!cp || !cp.last_id) {
    td.textContent = "none";
    td.className = "muted";
    return td;
  }
  const age = cp.last_at ? duration(since(cp.last_at)) + " ago" : "";
  td.append(
    el("span", { "data-field": "checkpoint_id", text: "#" + cp.last_id }), " ",
    el("span", { "data-field": "checkpoint_age", "data-value": cp.last_at || "", text: age }), ", ",
    el("span", { "data-field": "checkpoint_size", "data-value": String(cp.last_size_bytes || 0), text: bytes(cp.last_size_bytes || 0) }), ", ",
    el("span", { "data-field": "checkpoint_duration", "data-value": String(cp.last_duration_seconds || 0), text: (cp.last_duration_seconds || 0).toFixed(3) + " s" }),
  );
  return td;
}

// sparkline draws rows/s in and out over the history's span.
function chart(rates, width, height, withAxes) {
  const s = svg("svg", { width: width, height: height, viewBox: `0 0 ${width} ${height}`, class: withAxes ? "chart-svg" : "spark", role: "img" });
  const pad = withAxes ? { l: 48, r: 8, t: 16, b: 18 } : { l: 1, r: 1, t: 2, b: 2 };
  const w = width - pad.l - pad.r;
  const h = height - pad.t - pad.b;
  // The history holds at most 15 minutes; a younger one fills the width.
  const now = rates.length ? Date.parse(rates[rates.length - 1].t) : Date.now();
  const oldest = rates.length ? Date.parse(rates[0].t) : now;
  const span = Math.max(Math.min(15 * 60 * 1000, now - oldest), 10 * 1000);
  let top = 1;
  for (const r of rates) top = Math.max(top, r.rows_in_per_second, r.rows_out_per_second);
  const x = (t) => pad.l + w - ((now - Date.parse(t)) / span) * w;
  const y = (v) => pad.t + h - (v / top) * h;
  for (const [key, cls] of [["rows_in_per_second", "in"], ["rows_out_per_second", "out"]]) {
    if (rates.length === 0) continue;
    const pts = rates.map((r) => x(r.t).toFixed(1) + "," + y(r[key]).toFixed(1)).join(" ");
    s.append(svg("polyline", { class: cls, points: pts }));
  }
  const last = rates.length ? rates[rates.length - 1] : null;
  s.append(svg("title", {}, last ? `now: ${last.rows_in_per_second.toFixed(1)} rows/s in, ${last.rows_out_per_second.toFixed(1)} rows/s out` : "no samples yet"));
  if (withAxes) {
    s.append(svg("line", { class: "axis", x1: pad.l, y1: pad.t + h, x2: pad.l + w, y2: pad.t + h }));
    s.append(svg("line", { class: "axis", x1: pad.l, y1: pad.t, x2: pad.l, y2: pad.t + h }));
    s.append(svg("text", { x: pad.l - 4, y: pad.t + 4, "text-anchor": "end" }, top.toFixed(top < 10 ? 1 : 0)));
    s.append(svg("text", { x: pad.l - 4, y: pad.t + h, "text-anchor": "end" }, "0"));
    s.append(svg("text", { x: pad.l, y: height - 4 }, "−" + duration(span / 1000)));
    s.append(svg("text", { x: pad.l + w, y: height - 4, "text-anchor": "end" }, "now"));
    s.append(svg("text", { x: pad.l + 8, y: 11, class: "legend-in" }, "rows/s in"));
    s.append(svg("text", { x: pad.l + 80, y: 11, class: "legend-out" }, "rows/s out"));
  }
  return s;
}

async function renderList(list) {
  const body = document.querySelector("#pipelines tbody");
  const rows = [];
  for (const p of list) {
    const t = totals(p);
    const tr = el("tr", { "data-pipeline": p.name });
    const link = el("a", { href: "#/p/" + encodeURIComponent(p.name), text: p.name });
    const name = el("td", { "data-field": "name" }, link);
    if (p.error || p.reload_error) name.append(el("div", { class: "error", "data-field": "error", text: p.error || "changed file refused: " + p.reload_error }));
    tr.append(name);
    const state = el("td", {}, el("span", { class: "state state-" + p.state, "data-field": "state", text: p.state }));
    if (p.backfill) {
      // An edit rebuilt beside the running version, which serves meanwhile.
      const b = p.backfill;
      state.append(el("div", { class: "backfill", "data-field": "backfill",
        text: `backfill ${b.phase}: ${b.rows_replayed} rows replayed (up to checkpoint ${b.checkpoint}; ${b.serving ? "the previous version serves" : "nothing serves yet"})`,
        title: "rebuilding " + b.operators.join(", ") }));
    }
    tr.append(state);
    tr.append(cell("uptime", p.started_at && (p.state === "running" || p.state === "backfilling") ? duration(since(p.started_at)) : "–", "", p.started_at || ""));
    tr.append(cell("rows_in", String(t.rowsIn), "num"));
    tr.append(cell("rows_out", String(t.rowsOut), "num"));
    const spark = el("td", { "data-field": "rates" });
    tr.append(spark);
    tr.append(cell("lag", t.lag, "num"));
    tr.append(checkpointCell(p.checkpoints));
    tr.append(cell("restarts", String(p.restarts), "num"));
    tr.append(cell("errors", String(p.errors || 0), "num" + (p.errors ? " bad" : "")));
    tr.append(cell("skipped", String(t.skipped), "num"));
    tr.append(cell("dead_lettered", String(t.deadLettered), "num"));
    rows.push([tr, spark, p]);
  }
  // Histories load before the rows are swapped in: no flicker.
  await Promise.all(rows.map(async ([, spark, p]) => {
    try {
      const hist = await getJSON(pipelinePath(p.name, "history"));
      spark.append(chart(hist.rates, 160, 28, false));
    } catch (e) {
      spark.textContent = "–";
    }
  }));
  body.replaceChildren(...rows.map((r) => r[0]));
}

// ---- plan graph -------------------------------------------------------

const NODE_W = 270;
const LINE_H = 13;
const COL_GAP = 150;
const ROW_GAP = 34;

function wrap(text, width) {
  const lines = [];
  let rest = text;
  while (rest.length > width) {
    let cut = rest.lastIndexOf(" ", width);
    if (cut < width / 2) cut = width;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, "");
  }
  lines.push(rest);
  return lines;
}

function keyText(key) {
  return key === null || key === undefined ? "none" : "[" + key.join(", ") + "]";
}

function edgeLabel(e) {
  return e.lookup ? "lookup" : e.changelog.text + " key " + keyText(e.upsert_key);
}

// ---- time and pressure ------------------------------------------------

// What the page remembers of each pipeline's last poll: per node, its
// busy and backpressure seconds, to show their share of the time since.
const lastPressure = {};

// nodeKey names a node of /pipelines as the plan does: "source:NAME",
// an operator's id, "sink:NAME".
function pressure(p) {
  const now = Date.now();
  const nodes = {};
  for (const s of p.sources || []) nodes["source:" + s.name] = s;
  for (const o of p.operators || []) nodes[o.operator] = o;
  for (const s of p.sinks || []) nodes["sink:" + s.name] = s;
  const prev = lastPressure[p.name];
  const out = {};
  for (const [key, n] of Object.entries(nodes)) {
    const busy = n.busy_seconds || 0;
    const bp = n.backpressure_seconds || 0;
    const r = { t: n, busy: busy, bp: bp };
    // A running pipeline: the share of the wall time since the last
    // poll; otherwise (finished, failed) the seconds over its runs.
    if (prev && p.state === "running" && prev.nodes[key] && now - prev.at >= 500) {
      const dt = (now - prev.at) / 1000;
      r.busyShare = Math.min(1, Math.max(0, (busy - prev.nodes[key].busy) / dt));
      r.bpShare = Math.min(1, Math.max(0, (bp - prev.nodes[key].bp) / dt));
    }
    out[key] = r;
  }
  if (!prev || now - prev.at >= 500) lastPressure[p.name] = { at: now, nodes: out };
  return out;
}

// seconds shows a time spent: milliseconds below a second.
function seconds(v) {
  if (v < 0.01) return (v * 1000).toFixed(1) + " ms";
  if (v < 1) return (v * 1000).toFixed(0) + " ms";
  return v.toFixed(2) + " s";
}

function pressureText(r, output) {
  const part = (share, secs) => (share !== undefined ? Math.round(100 * share) + "%" : seconds(secs));
  let text = "busy " + part(r.busyShare, r.busy);
  if (output) text += " · backpressure " + part(r.bpShare, r.bp);
  return text;
}

// busiest is the key of the operator or sink that worked most: over the
// last poll when the pipeline runs, else over its runs.
function busiest(pr) {
  let best = null;
  let top = 0;
  for (const [key, r] of Object.entries(pr)) {
    if (key.startsWith("source:")) continue;
    const v = r.busyShare !== undefined ? r.busyShare : r.busy;
    if (v > top) {
      top = v;
      best = key;
    }
  }
  return best;
}

// runtimeKey is what /pipelines calls a plan's node.
function runtimeKey(n) {
  if (n.kind === "operator") return n.operator_id;
  return n.kind + ":" + n.name;
}

function nodeExtra(n, states, pr) {
  const out = [];
  if (n.kind === "sink") {
    out.push("mode " + n.sink_mode + (n.sink_key && n.sink_key.length ? " key " + keyText(n.sink_key) : ""));
  }
  if (n.kind === "source" && n.watermark) out.push("watermark " + n.watermark);
  if (n.stateful) {
    const st = states[n.state_id];
    out.push(st ? `state: ${st.entries} entries, ${st.bytes} B snapshot` : "state: –");
  }
  const r = pr[runtimeKey(n)];
  if (r) out.push(pressureText(r, n.kind !== "sink"));
  return out;
}

// drawPlan lays the graph out in columns by longest path from a source
// and draws each transform as a dashed box around its operators, at the
// size of its text: a wide plan scrolls, it is never scaled down. The
// busiest operator or sink is marked, and each edge shows the watermark
// of the node it leaves.
function drawPlan(d, states, pr) {
  const drawn = d.nodes.filter((n) => n.kind !== "transform");
  const inputs = {};
  for (const e of d.edges) (inputs[e.to] = inputs[e.to] || []).push(e.from);
  const col = {};
  const depth = (id, seen) => {
    if (col[id] !== undefined) return col[id];
    if (seen.has(id)) return 0;
    seen.add(id);
    const ins = inputs[id] || [];
    col[id] = ins.length ? Math.max(...ins.map((i) => depth(i, seen) + 1)) : 0;
    return col[id];
  };
  for (const n of drawn) depth(n.id, new Set());
  const cols = [];
  for (const n of drawn) (cols[col[n.id]] = cols[col[n.id]] || []).push(n);
  const box = {};
  let height = 0;
  cols.forEach((nodes, c) => {
    let y = 30;
    for (const n of nodes || []) {
      const lines = wrap(n.label, 40);
      const extra = nodeExtra(n, states, pr);
      const h = 22 + LINE_H + (lines.length + extra.length) * LINE_H;
      box[n.id] = { x: 20 + c * (NODE_W + COL_GAP), y: y, w: NODE_W, h: h, lines: lines, extra: extra };
      y += h + ROW_GAP;
    }
    height = Math.max(height, y);
  });
  const width = 40 + cols.length * (NODE_W + COL_GAP) - COL_GAP;
  const s = svg("svg", { width: width, height: height + 10, viewBox: `0 0 ${width} ${height + 10}`, "data-pipeline": d.name });
  s.append(svg("defs", {}));
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#555" }));
  s.firstChild.append(marker);
  // Transform groups first, under everything else.
  for (const t of d.nodes.filter((n) => n.kind === "transform")) {
    const members = drawn.filter((n) => n.parent === t.id).map((n) => box[n.id]);
    const g = svg("g", { class: "group", "data-id": t.id });
    g.append(svg("title", {}, t.label));
    if (members.length) {
      const x0 = Math.min(...members.map((b) => b.x)) - 8;
      const y0 = Math.min(...members.map((b) => b.y)) - 20;
      const x1 = Math.max(...members.map((b) => b.x + b.w)) + 8;
      const y1 = Math.max(...members.map((b) => b.y + b.h)) + 8;
      g.append(svg("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 6 }));
      g.append(svg("text", { x: x0 + 6, y: y0 + 13, class: "label" }, "transform " + t.label));
    }
    s.append(g);
  }
  const byId = Object.fromEntries(drawn.map((n) => [n.id, n]));
  for (const e of d.edges) {
    const a = box[e.from];
    const b = box[e.to];
    if (!a || !b) continue;
    const x1 = a.x + a.w;
    const y1 = a.y + a.h / 2;
    const x2 = b.x;
    const y2 = b.y + b.h / 2;
    const mx = (x1 + x2) / 2;
    const g = svg("g", { class: "edge" + (e.lookup ? " lookup" : ""), "data-from": e.from, "data-to": e.to });
    g.append(svg("path", { d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`, "marker-end": "url(#arrow)" }));
    g.append(svg("title", {}, edgeLabel(e)));
    const updating = e.changelog.kinds.length > 1;
    const label = svg("text", { x: mx, y: (y1 + y2) / 2 - 16, "text-anchor": "middle", class: "edge-label" + (updating ? " updating" : "") });
    if (e.lookup) {
      label.append(svg("tspan", { x: mx, dy: 0 }, "lookup"));
    } else {
      label.append(svg("tspan", { x: mx, dy: 0 }, e.changelog.text));
      wrap("key " + keyText(e.upsert_key), 24).forEach((line) => label.append(svg("tspan", { x: mx, dy: 12 }, line)));
      const r = pr[runtimeKey(byId[e.from])];
      // To the second, so that it fits between the columns; the node
      // table has it whole.
      if (r && r.t.watermark) label.append(svg("tspan", { x: mx, dy: 12, class: "wm", "data-watermark": r.t.watermark }, "wm " + watermarkText({ watermark: r.t.watermark }).slice(0, 19)));
    }
    g.append(label);
    s.append(g);
  }
  const hot = busiest(pr);
  for (const n of drawn) {
    const b = box[n.id];
    const cls = ["node", n.kind].concat(n.stateful ? ["stateful"] : [], hot !== null && runtimeKey(n) === hot ? ["busiest"] : []).join(" ");
    const g = svg("g", { class: cls, "data-id": n.id, transform: `translate(${b.x},${b.y})` });
    g.append(svg("title", {}, n.label));
    g.append(svg("rect", { width: b.w, height: b.h, rx: 4 }));
    const kind = n.kind === "operator" ? n.operator_id || n.operator : n.kind + (n.connector ? " · " + n.connector : "");
    g.append(svg("text", { x: 8, y: 13, class: "kind" }, kind + " " + n.changelog.text));
    g.append(svg("text", { x: 8, y: 13 + LINE_H, class: "kind" }, n.kind === "sink" ? "receives " + n.changelog.text : "key " + keyText(n.upsert_key)));
    b.lines.forEach((line, i) => g.append(svg("text", { x: 8, y: 28 + LINE_H + i * LINE_H, class: "label-line" }, line)));
    b.extra.forEach((line, i) => g.append(svg("text", { x: 8, y: 28 + LINE_H + (b.lines.length + i) * LINE_H, class: "extra" }, line)));
    s.append(g);
  }
  return s;
}

// ---- detail -------------------------------------------------------------

function renderFile(f) {
  const box = document.getElementById("file");
  const wrapEl = el("div", { class: "file", "data-file": f.file });
  const byLine = {};
  const unplaced = [];
  for (const e of f.errors) {
    if (e.line > 0) (byLine[e.line] = byLine[e.line] || []).push(e);
    else unplaced.push(e);
  }
  const head = el("p", { class: "muted", text: f.file + (f.refused ? " (this newer content was refused; the previous version keeps running)" : "") });
  for (const e of unplaced) wrapEl.append(el("div", { class: "msg", "data-line": "0", text: (e.path ? e.path + ": " : "") + e.message }));
  f.text.split("\n").forEach((text, i) => {
    const no = i + 1;
    const errs = byLine[no] || [];
    const line = el("div", { class: "line" + (errs.length ? " has-error" : ""), "data-line": String(no) }, el("span", { class: "no", text: String(no) }), text);
    wrapEl.append(line);
    for (const e of errs) {
      const pointer = e.col > 0 ? " ".repeat(e.col - 1) + "^ " : "";
      wrapEl.append(el("div", { class: "msg", "data-line": String(no), text: pointer + `${no}:${e.col}: ` + (e.path ? e.path + ": " : "") + e.message }));
    }
  });
  box.replaceChildren(head, wrapEl);
}

function renderSample(v) {
  sampling = v.enabled;
  document.getElementById("sample-toggle").textContent = v.enabled ? "Stop sampling" : "Start sampling";
  const table = document.getElementById("sample");
  table.hidden = !v.enabled && v.changes.length === 0;
  const rows = v.changes.slice().reverse().map((c) =>
    el("tr", { "data-kind": c.kind },
      el("td", { text: new Date(c.t).toLocaleTimeString() }),
      el("td", { text: c.sink }),
      el("td", { class: "kind-" + kindClass(c.kind), text: c.kind }),
      el("td", { class: "row", text: c.row })));
  table.tBodies[0].replaceChildren(...rows);
}

function kindClass(k) {
  return { "+I": "I", "-U": "UB", "+U": "UA", "-D": "D" }[k] || "";
}

// watermarkText shows a watermark to the second, in UTC as the data's
// event times usually are.
function watermarkText(t) {
  if (!t.watermark) return "–";
  return t.watermark.replace("T", " ").replace(/(\.\d{3})\d*/, "$1").replace("Z", "") + (t.watermark_ended ? " (ended)" : "");
}

function lagText(t) {
  if (t.event_time_lag_seconds === undefined) return "–";
  return duration(t.event_time_lag_seconds);
}

// nodeRows lists the sources, operators and sinks of p with what the
// table shows of each.
function nodeRows(p, pr) {
  const dropped = Object.fromEntries((p.dropped || []).map((d) => [d.name, d]));
  const states = Object.fromEntries((p.operator_state || []).map((o) => [o.operator, o]));
  const rows = [];
  for (const s of p.sources || []) rows.push({ kind: "source", key: "source:" + s.name, name: "source " + s.name, title: "source " + s.name, t: s });
  for (const o of p.operators || []) {
    const d = dropped[o.operator];
    rows.push({ kind: "operator", key: o.operator, name: o.operator, title: o.plan, t: o,
      dropped: d ? String(d.skipped) + (d.reason ? " " + d.reason : "") : "", state: states[o.operator] });
  }
  for (const s of p.sinks || []) rows.push({ kind: "sink", key: "sink:" + s.name, name: "sink " + s.name, title: "sink " + s.name, t: s });
  for (const r of rows) r.pr = pr[r.key];
  return rows;
}

function share(v) {
  return v === undefined ? "" : Math.round(100 * v) + "%";
}

function renderNodes(p, pr) {
  const table = document.getElementById("nodes");
  const hot = busiest(pr);
  table.tBodies[0].replaceChildren(...nodeRows(p, pr).map((r) => {
    const t = r.t;
    const timed = r.kind !== "sink";
    const tr = el("tr", { "data-node": r.key, class: r.key === hot ? "busiest" : "" },
      el("td", { text: r.name, title: r.title || "" }),
      el("td", { class: "num", "data-field": "rows_in", text: String(t.rows_in) }),
      el("td", { class: "num", "data-field": "rows_out", text: String(t.rows_out) }),
      el("td", { "data-field": "watermark", "data-value": t.watermark || "", text: timed ? watermarkText(t) : "" }),
      el("td", { class: "num", "data-field": "lag", "data-value": String(t.event_time_lag_seconds ?? ""), text: timed ? lagText(t) : "" }),
      el("td", { class: "num", "data-field": "busy", "data-value": String(t.busy_seconds || 0), text: seconds(t.busy_seconds || 0) + (r.pr && r.pr.busyShare !== undefined ? " (" + share(r.pr.busyShare) + ")" : "") }),
      el("td", { class: "num", "data-field": "backpressure", "data-value": String(t.backpressure_seconds || 0), text: r.kind === "sink" ? "" : seconds(t.backpressure_seconds || 0) + (r.pr && r.pr.bpShare !== undefined ? " (" + share(r.pr.bpShare) + ")" : "") }),
      el("td", { class: "num", "data-field": "retries", text: String(t.retries || 0) }),
      el("td", { class: "num", "data-field": "dropped", text: r.dropped || "" }),
      el("td", { class: "num", "data-field": "entries", text: r.state ? String(r.state.entries) : "" }),
      el("td", { class: "num", "data-field": "bytes", text: r.state ? String(r.state.bytes) : "" }));
    return tr;
  }));
}

// renderCheckpoints lists the last checkpoints, newest first.
function renderCheckpoints(p) {
  const table = document.getElementById("checkpoints");
  const list = ((p.checkpoints || {}).recent || []).slice().reverse();
  table.hidden = list.length === 0;
  table.tBodies[0].replaceChildren(...list.map((c) =>
    el("tr", { "data-checkpoint": String(c.id) },
      el("td", { class: "num", text: "#" + c.id + (c.final ? " (final)" : "") }),
      el("td", { "data-field": "at", "data-value": c.at, text: duration(since(c.at)) + " ago" }),
      el("td", { class: "num", "data-field": "duration", "data-value": String(c.duration_seconds), text: c.duration_seconds.toFixed(3) + " s" }),
      el("td", { class: "num", "data-field": "size", "data-value": String(c.size_bytes), text: bytes(c.size_bytes) }),
      el("td", { class: "num", "data-field": "alignment", "data-value": String(c.alignment_seconds), text: c.alignment_seconds.toFixed(3) + " s" }))));
}

async function renderDetail(p) {
  const section = document.getElementById("detail");
  section.hidden = false;
  section.setAttribute("data-pipeline", p.name);
  document.getElementById("detail-title").textContent = p.name + " — " + p.state;
  const err = document.getElementById("detail-error");
  err.hidden = !p.error;
  err.textContent = p.error || "";
  const [hist, file, sample] = await Promise.all([
    getJSON(pipelinePath(p.name, "history")),
    getJSON(pipelinePath(p.name, "file")),
    getJSON(pipelinePath(p.name, "sample")),
  ]);
  document.getElementById("rates-big").replaceChildren(chart(hist.rates, 720, 140, true));
  renderFile(file);
  renderSample(sample);
  const pr = pressure(p);
  renderNodes(p, pr);
  renderCheckpoints(p);
  const states = Object.fromEntries((p.operator_state || []).map((o) => [o.state_id, o]));
  const plan = document.getElementById("plan");
  if (planShown !== p.name) {
    planShown = p.name;
    lastPlan = null;
    try {
      lastPlan = await getJSON(pipelinePath(p.name, "plan"));
    } catch (e) {
      lastPlan = null;
    }
  }
  if (lastPlan) plan.replaceChildren(drawPlan(lastPlan, states, pr));
  else plan.replaceChildren(el("p", { class: "muted", text: "No plan: the file did not load." }));
  // A file that did not load runs nothing: no rates, nothing to sample.
  document.getElementById("rates-big").hidden = !lastPlan;
  document.getElementById("sample-box").hidden = !lastPlan;
}

function route() {
  const m = location.hash.match(/^#\/p\/(.+)$/);
  selected = m ? decodeURIComponent(m[1]) : null;
  if (!selected) document.getElementById("detail").hidden = true;
}

async function refresh() {
  try {
    const list = await getJSON(API);
    await renderList(list);
    const p = selected && list.find((x) => x.name === selected);
    if (p) await renderDetail(p);
    const st = document.getElementById("status");
    st.textContent = "updated " + new Date().toLocaleTimeString();
    st.setAttribute("data-refreshed", String(Date.now()));
  } catch (e) {
    document.getElementById("status").textContent = "error: " + e.message;
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

document.getElementById("sample-toggle").addEventListener("click", async () => {
  if (!selected) return;
  const v = await getJSON(pipelinePath(selected, "sample"), {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Etld-Console": "1" },
    body: JSON.stringify({ enabled: !sampling }),
  });
  renderSample(v);
});

window.addEventListener("hashchange", () => {
  route();
  planShown = null;
});
route();
refresh();
