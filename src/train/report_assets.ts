/** The report page's style and script (plain browser JavaScript, no libraries, no network). */

export const reportStyle = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 40px;color:#1d2330}
h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #dde;padding-bottom:4px;margin-top:28px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:14px}
figure{margin:0;border:1px solid #e3e6ee;border-radius:6px;padding:8px}figcaption{font-weight:600;margin-bottom:4px}
svg.chart{width:100%;height:180px}svg.chart text{font-size:10px;fill:#667}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #dde;padding:3px 8px;text-align:right}
th{background:#f4f6fa}#browser{display:flex;gap:12px}#episode-list{min-width:260px;font:12px monospace}
#episode{flex:1;min-width:0}.turn{border-left:3px solid #6b8afd;margin:8px 0;padding:4px 10px;background:#f7f8fc}
.turn pre{white-space:pre-wrap;margin:2px 0}.obs{border-left-color:#bbb;background:#fafafa}
.ok{color:#0a7a32}.bad{color:#b42318}pre{white-space:pre-wrap;background:#f6f7f9;padding:8px;border-radius:4px}
.muted{color:#778}`;

export const reportScript = `
const D = JSON.parse(document.getElementById("data").textContent);
const NS = "http://www.w3.org/2000/svg";
const el = (tag, attrs = {}, text) => { const e = document.createElement(tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; };
const sv = (tag, attrs = {}) => { const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); return e; };
const COLORS = ["#3b6df0", "#e8590c", "#0a7a32", "#9c36b5", "#c92a2a"];
function chart(title, series) {
  const fig = el("figure"); fig.appendChild(el("figcaption", {}, title));
  const W = 360, H = 180, L = 40, R = 8, T = 8, B = 22;
  const svg = sv("svg", { class: "chart", viewBox: "0 0 " + W + " " + H, "data-title": title });
  const pts = series.flatMap((s) => s.points);
  if (pts.length === 0) { fig.appendChild(el("p", { class: "muted" }, "no data yet")); return fig; }
  let x0 = Math.min(...pts.map((p) => p[0])), x1 = Math.max(...pts.map((p) => p[0]));
  let y0 = Math.min(...pts.map((p) => p[1])), y1 = Math.max(...pts.map((p) => p[1]));
  if (x1 === x0) x1 = x0 + 1; if (y1 === y0) { y1 += 0.5; y0 -= 0.5; }
  const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R), Y = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
  svg.appendChild(sv("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#99a" }));
  svg.appendChild(sv("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#99a" }));
  for (const [y, v] of [[T + 4, y1], [H - B, y0]]) { const t = sv("text", { x: 2, y }); t.textContent = +v.toPrecision(3); svg.appendChild(t); }
  for (const [x, v] of [[L, x0], [W - R - 20, x1]]) { const t = sv("text", { x, y: H - 6 }); t.textContent = +v.toPrecision(4); svg.appendChild(t); }
  series.forEach((s, i) => {
    if (s.points.length === 0) return;
    const d = s.points.map((p, k) => (k ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1)).join(" ");
    svg.appendChild(sv("path", { d, fill: "none", stroke: COLORS[i % COLORS.length], "stroke-width": 1.6, class: "series" }));
    if (s.points.length < 40) for (const p of s.points) svg.appendChild(sv("circle", { cx: X(p[0]), cy: Y(p[1]), r: 2.2, fill: COLORS[i % COLORS.length] }));
    const t = sv("text", { x: L + 6 + 90 * i, y: T + 10, fill: COLORS[i % COLORS.length] }); t.textContent = s.name; svg.appendChild(t);
  });
  fig.appendChild(svg); return fig;
}
function bars(title, cats, series) {
  const fig = el("figure"); fig.appendChild(el("figcaption", {}, title));
  const W = 360, rowH = 14 * series.length + 8, H = 16 + rowH * cats.length, L = 70;
  const svg = sv("svg", { class: "chart bars", viewBox: "0 0 " + W + " " + H, style: "height:" + H + "px", "data-title": title });
  cats.forEach((c, i) => {
    const t = sv("text", { x: 2, y: 16 + i * rowH + 12 }); t.textContent = c; svg.appendChild(t);
    series.forEach((s, k) => {
      const v = s.values[i] || 0, y = 16 + i * rowH + k * 14;
      svg.appendChild(sv("rect", { x: L, y, width: Math.max(1, v * (W - L - 60)), height: 11, fill: COLORS[k % COLORS.length], class: "series" }));
      const lbl = sv("text", { x: L + v * (W - L - 60) + 4, y: y + 9 }); lbl.textContent = s.name + " " + (100 * v).toFixed(0) + "%"; svg.appendChild(lbl);
    });
  });
  fig.appendChild(svg); return fig;
}
const rl = D.metrics.filter((m) => m.phase === "rl"), sft = D.metrics.filter((m) => m.phase === "sft");
const line = (rows, x, y) => rows.filter((r) => typeof r[y] === "number").map((r) => [r[x], r[y]]);
const evals = D.evals;
const charts = document.getElementById("charts");
charts.appendChild(chart("Success rate (training episodes, test evaluations)", [
  { name: "train", points: line(rl, "step", "success_rate") },
  { name: "test", points: evals.filter((e) => e.phase !== "sft").map((e) => [e.step, e.avg]) },
]));
charts.appendChild(chart("Reward mean", [{ name: "reward", points: line(rl, "step", "reward_mean") }]));
charts.appendChild(chart("Policy loss", [{ name: "loss", points: line(rl, "step", "policy_loss") }]));
charts.appendChild(chart("KL to the reference", [{ name: "kl", points: line(rl, "step", "kl") }]));
charts.appendChild(chart("Entropy", [{ name: "entropy", points: line(rl, "step", "entropy") }]));
charts.appendChild(chart("Rounds per episode", [{ name: "mean", points: line(rl, "step", "rounds_mean") }, { name: "limit", points: line(rl, "step", "rounds_max") }]));
charts.appendChild(chart("SFT loss", [{ name: "loss", points: line(sft, "step", "loss") }]));
const ev = document.getElementById("evals");
if (evals.length === 0) ev.appendChild(el("p", { class: "muted" }, "no evaluation yet"));
else {
  const cats = [...new Set(evals.flatMap((e) => Object.keys(e.byCategory || {})))].sort();
  const table = el("table", { id: "eval-table" });
  const head = el("tr"); for (const h of ["phase", "step", "success (Avg@" + (evals[0].samples || 1) + ")", "Pass@n", ...cats]) head.appendChild(el("th", {}, h));
  table.appendChild(head);
  for (const e of evals) {
    const tr = el("tr");
    for (const v of [e.phase, e.step, (100 * e.avg).toFixed(1) + "%", (100 * e.pass).toFixed(1) + "%", ...cats.map((c) => e.byCategory && e.byCategory[c] ? (100 * e.byCategory[c].avg).toFixed(1) + "% of " + e.byCategory[c].tasks : "")]) tr.appendChild(el("td", {}, String(v)));
    table.appendChild(tr);
  }
  ev.appendChild(table);
  const shown = [evals.find((e) => e.phase === "sft"), evals[evals.length - 1]].filter((e, i, a) => e && a.indexOf(e) === i);
  ev.appendChild(bars("Success by category", cats, shown.map((e) => ({ name: e.phase, values: cats.map((c) => e.byCategory[c] ? e.byCategory[c].avg : 0) }))));
}
const list = document.getElementById("episode-list"), view = document.getElementById("episode");
D.episodes.forEach((e, i) => list.appendChild(el("option", { value: i }, (e.success ? "✓ " : "✗ ") + e.phase + " #" + e.step + " task " + e.task + " (" + e.rounds + " rounds)")));
function show(i) {
  const e = D.episodes[i]; view.textContent = ""; if (!e) return;
  view.appendChild(el("p", { class: e.success ? "ok" : "bad" }, (e.success ? "solved" : "not solved") + ", reward " + e.reward + ", " + e.finish + ", " + e.rounds + " rounds"));
  view.appendChild(el("pre", { class: "turn obs" }, e.first));
  for (const t of e.turns || []) {
    const d = el("div", { class: "turn" });
    const m = /^([\\s\\S]*?)Action:/.exec(t.text || ""); const thought = m ? m[1].replace(/^\\s*Thought:\\s*/, "").trim() : "";
    if (thought) d.appendChild(el("pre", {}, "Thought: " + thought));
    d.appendChild(el("pre", {}, "Action: " + (t.action === null ? "(none: " + t.text + ")" : t.action)));
    view.appendChild(d); view.appendChild(el("pre", { class: "turn obs" }, t.observation));
  }
}
list.addEventListener("change", () => show(+list.value)); if (D.episodes.length) { list.value = "0"; show(0); }
const s = document.getElementById("summary");
const first = evals.find((e) => e.phase === "sft"), final = evals.filter((e) => e.phase === "final").pop();
s.textContent = (first ? "Test success after SFT " + (100 * first.avg).toFixed(1) + "%. " : "") + (final ? "After RL " + (100 * final.avg).toFixed(1) + "%. " : "") + rl.length + " RL steps logged.";
`;
