// The report's charts, drawn with uPlot (loaded before this script as the global `uPlot`): every scalar logged in
// metrics.jsonl and evals.jsonl, in groups, one series per metric (per run and metric when runs are compared).
// Scalars the catalogue below does not name are charted under "Other", so nothing logged is ever left out; a chart
// whose every point has one value is listed under "Constant over the run" instead of drawn as a flat line. With
// smoothing the raw points stay drawn, faint, under the smoothed curve. Evaluation-only charts share the training
// steps' x range. Compared runs differ by colour, their metrics by dash; each legend marker shows both.
// browser.js runs after this script and uses D, el() and fmt(). A live page (the studio) draws the same charts as
// its run goes: it calls reportCharts.redraw(data) with the lines so far, and names the groups it shows in the
// charts element's data-groups ("|"-separated titles; all when absent).

let D = JSON.parse(document.getElementById("data").textContent);
const PALETTE = ["#3b6df0", "#e8590c", "#0a7a32", "#9c36b5", "#c92a2a", "#0b7285", "#b08800", "#d6336c", "#5f3dc4"];
const DASHES = [undefined, [7, 4], [2, 3], [10, 3, 2, 3], [1, 5]];
const UNIT = [0, 1];
const STEP_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5];

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A number for ticks and the legend: at most 4 significant digits, exponents for the very small and large. */
function fmt(v) {
  if (typeof v !== "number" || !Number.isFinite(v)) return "–";
  if (v === 0) return "0";
  const a = Math.abs(v);
  return a >= 1e5 || a < 1e-3 ? v.toExponential(2).replace(/\.?0+e/, "e") : String(+v.toPrecision(4));
}

/** A line's value at a path (dotted string or array): a finite number, a boolean as 0/1, else null. */
function valueAt(line, path) {
  let v = line;
  for (const k of Array.isArray(path) ? path : path.split(".")) v = v === null || v === undefined ? undefined : v[k];
  if (typeof v === "boolean") return v ? 1 : 0;
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** The keys of the RL steps' metrics lines that start with `prefix`, across the runs, in first-logged order. */
function rlKeys(prefix) {
  const keys = new Set();
  for (const run of D.runs) {
    for (const line of run.metrics) {
      if (line.phase === "rl") { for (const k of Object.keys(line)) if (k.startsWith(prefix)) keys.add(k); }
    }
  }
  return [...keys];
}

const isPre = (p) => p === "pretrain";
const notPre = (p) => p !== "pretrain";
const anyPhase = () => true;
/** A metrics.jsonl scalar of one phase. */
const m = (phase, key, label = key) => ({ src: "metrics", phase: (p) => p === phase, key, label });
/** An evals.jsonl scalar of the evaluations whose phase `which` accepts. */
const e = (which, key, label = key) => ({ src: "evals", phase: which, key, label });

/** [group title, charts]; a chart has a title, series (or `categories`: one series per category) and a y range. */
const GROUPS = [
  ["Pretraining", [
    {
      title: "Pretraining loss",
      series: [m("pretrain", "loss"), m("pretrain", "task_loss"), m("pretrain", "copy_loss")],
    },
    { title: "Held-out success", range: UNIT, series: [e(isPre, "avg", "Avg@n"), e(isPre, "pass", "Pass@n")] },
    { title: "Held-out success by category", range: UNIT, categories: isPre },
    {
      title: "Copy accuracy (held-out)",
      range: UNIT,
      series: [e(isPre, "copy.names", "names copied"), e(isPre, "copy.replies", "replies exact")],
    },
    { title: "Copy NLL (held-out replies)", series: [e(isPre, "copy.nll", "reply NLL")] },
    { title: "Held-out mean reward", series: [e(isPre, "meanReward", "mean reward")] },
    { title: "Pretraining gradient norm", series: [m("pretrain", "gradNorm")] },
    { title: "Pretraining learning rate", series: [m("pretrain", "lr")] },
    { title: "Pretraining tokens per step", series: [m("pretrain", "tokens"), m("pretrain", "targets")] },
  ]],
  ["Rewards and success", [
    {
      title: "Success rate (RL episodes; test Avg@n, Pass@n)",
      range: UNIT,
      series: [m("rl", "success_rate", "train"), e(notPre, "avg", "test Avg@n"), e(notPre, "pass", "test Pass@n")],
    },
    {
      title: "Reward",
      series: [
        m("rl", "reward_mean", "mean"),
        m("rl", "reward_std", "std"),
        e(notPre, "meanReward", "test mean"),
        m("rl", "split_reward_mean", "mean, train split"),
        m("rl", "synthetic_reward_mean", "mean, synthetic worlds"),
      ],
    },
    { title: "Groups with a learning signal (share)", range: UNIT, series: [m("rl", "groups_with_signal")] },
    {
      // Only runs with data.synthetic_prompts log these; a chart with no points is not drawn.
      title: "By kind of prompt (data.synthetic_prompts): success and groups with signal",
      range: UNIT,
      series: [
        m("rl", "split_success_rate", "success, train split"),
        m("rl", "synthetic_success_rate", "success, synthetic worlds"),
        m("rl", "split_groups_with_signal", "signal, train split"),
        m("rl", "synthetic_groups_with_signal", "signal, synthetic worlds"),
      ],
    },
    { title: "Test success by category", range: UNIT, categories: notPre },
  ]],
  ["Losses, KL and entropy", [
    { title: "Policy loss", series: [m("rl", "policy_loss")] },
    {
      title: "KL",
      series: [m("rl", "kl", "kl (to the reference)"), m("rl", "ppo_kl", "ppo_kl (to the rollout policy)")],
    },
    { title: "Entropy", series: [m("rl", "entropy")] },
    { title: "SFT loss", series: [m("sft", "loss")] },
  ]],
  ["Preference learning (DPO, ETO, AgentEvol)", [
    {
      title: "DPO implicit rewards",
      series: [
        m("dpo", "rewards/chosen", "chosen"),
        m("dpo", "rewards/rejected", "rejected"),
        m("dpo", "rewards/margins", "margin"),
      ],
    },
    { title: "DPO reward accuracy", range: UNIT, series: [m("dpo", "rewards/accuracies", "accuracy")] },
    { title: "DPO loss", series: [m("dpo", "loss")] },
    {
      title: "DPO log-probabilities",
      series: [m("dpo", "logps/chosen", "chosen"), m("dpo", "logps/rejected", "rejected")],
    },
    {
      title: "Exploration success per round (train tasks)",
      range: UNIT,
      series: [
        m("dpo_round", "explore_success_rate", "ETO"),
        m("agentevol_round", "explore_success_rate", "AgentEvol"),
      ],
    },
    {
      title: "Data per round",
      series: [
        m("dpo_round", "pairs", "pairs"),
        m("dpo_round", "expert_chosen", "expert chosen"),
        m("agentevol_round", "kept", "successes kept"),
      ],
    },
    { title: "AgentEvol fine-tuning loss", series: [m("agentevol", "loss")] },
    {
      title: "Gradient norm (DPO, AgentEvol)",
      series: [m("dpo", "gradNorm", "DPO"), m("agentevol", "gradNorm", "AgentEvol")],
    },
    { title: "Learning rate (DPO, AgentEvol)", series: [m("dpo", "lr", "DPO"), m("agentevol", "lr", "AgentEvol")] },
  ]],
  ["Clip fractions and gradient norm", [
    { title: "Clip fractions", series: [m("rl", "pg_clipfrac"), m("rl", "pg_clipfrac_lower")] },
    { title: "Gradient norm (RL)", series: [m("rl", "grad_norm")] },
    { title: "Skipped updates (non-finite gradients)", series: [m("rl", "skipped_updates")] },
    {
      title: "Micro-batches skipped (advantage 0 everywhere)",
      series: [m("rl", "skipped_microbatches", "skipped")],
    },
    {
      title: "Share of the update computed",
      range: UNIT,
      series: [m("rl", "computed_token_share", "share of the weight")],
    },
    { title: "Learning rate (RL)", series: [m("rl", "lr")] },
    { title: "Gradient norm (SFT)", series: [m("sft", "gradNorm")] },
    { title: "Learning rate (SFT)", series: [m("sft", "lr")] },
  ]],
  ["Lengths and rounds", [
    { title: "Rounds per episode", series: [m("rl", "rounds_mean", "mean"), m("rl", "rounds_max", "limit")] },
    { title: "Response length (tokens)", series: [m("rl", "response_length_mean", "mean")] },
    { title: "Sampled tokens per step", series: [m("rl", "sampled_tokens")] },
    { title: "Truncated episodes (token budget)", series: [m("rl", "truncated")] },
  ]],
  ["Throughput", [
    { title: "Throughput (tokens/s)", series: [m("rl", "tokens_per_s")] },
    { title: "SFT tokens per step", series: [m("sft", "tokens"), m("sft", "targets")] },
  ]],
  ["Time per phase", [
    {
      title: "RL step phases (s)",
      series: [
        m("rl", "time_rollout_s", "rollout"),
        m("rl", "time_logprobs_s", "log-probs"),
        m("rl", "time_update_s", "update"),
      ],
    },
    {
      title: "Rollout split (s)",
      series: [
        m("rl", "time_prefill_s", "prefill"),
        m("rl", "time_decode_s", "decode"),
        m("rl", "time_env_s", "environment"),
      ],
    },
  ]],
  ["Credit for each turn (GiGPO)", [
    {
      // Only algorithm.adv_estimator=gigpo logs these (src/rl/gigpo.ts): a run of another estimator has none.
      title: "Step groups: turns that share their state, and the step level's share of the advantage",
      range: UNIT,
      series: [
        m("rl", "gigpo_turns_grouped", "turns in a step group of 2 or more"),
        m("rl", "gigpo_step_advantage_share", "share of |advantage| from the step level"),
      ],
    },
    { title: "Mean step-group size (turns)", series: [m("rl", "gigpo_step_group_size", "mean size")] },
  ]],
  ["Critic (PPO)", [
    { title: "Value loss", series: [m("rl", "value_loss")] },
    { title: "Value clip fraction", range: UNIT, series: [m("rl", "vf_clipfrac")] },
    { title: "Critic gradient norm", series: [m("rl", "critic_grad_norm")] },
  ]],
  ["Environment failures", [
    {
      title: "Environment failures (RL)",
      series: [
        m("rl", "env_failures", "failures"),
        m("rl", "prompt_overflows", "prompt overflows"),
        m("rl", "episodes"),
      ],
    },
    {
      title: "Environment failures (evaluations)",
      series: [e(anyPhase, "envFailures", "failures"), e(anyPhase, "episodes"), e(anyPhase, "tasks")],
    },
  ]],
  ["Cluster (train --cluster)", [
    {
      // One series per reason the run logged (rejected_REASON, src/cluster/admit.ts's reasons); a run that refused
      // nothing logs only `rejected`, 0.
      title: "Group messages refused by the learner, by reason",
      series: [m("rl", "rejected", "all"), ...rlKeys("rejected_").map((k) => m("rl", k, k.slice("rejected_".length)))],
    },
    {
      title: "Groups dropped or played again",
      series: [
        m("rl", "duplicates_dropped", "duplicates"),
        m("rl", "stale_dropped", "stale"),
        m("rl", "prompts_replayed", "prompts replayed"),
      ],
    },
  ]],
];

/** Charts of the scalars no catalogue chart names: one per (file, phase, key); evaluations as test or pretrain. */
function otherCharts() {
  const named = GROUPS.flatMap(([, charts]) => charts.flatMap((c) => c.series ?? []));
  const found = new Map();
  const visit = (src, phase, path, v) => {
    if (typeof v !== "number" && typeof v !== "boolean") return;
    if (named.some((s) => s.src === src && s.key === path && s.phase(phase))) return;
    const group = src === "evals" ? (isPre(phase) ? "pretrain" : "test") : phase;
    const id = `${src} ${group} ${path}`;
    if (found.has(id)) return;
    const which = src === "evals" ? (p) => (isPre(p) ? "pretrain" : "test") === group : (p) => p === group;
    const title = src === "evals" ? `evaluation (${group}): ${path}` : `${phase}: ${path}`;
    found.set(id, { title, series: [{ src, phase: which, key: path, label: path }] });
  };
  for (const run of D.runs) {
    for (const src of ["metrics", "evals"]) {
      for (const line of run[src]) {
        if (typeof line.phase !== "string") continue;
        for (const [k, v] of Object.entries(line)) {
          if (k === "step" || k === "byCategory" || k === "perTask" || k === "splitTasks") continue;
          if (v !== null && typeof v === "object" && !Array.isArray(v)) {
            for (const [k2, v2] of Object.entries(v)) visit(src, line.phase, `${k}.${k2}`, v2);
          } else visit(src, line.phase, k, v);
        }
      }
    }
  }
  return [...found.values()];
}

let CATALOGUE = [...GROUPS, ["Other", otherCharts()]];

/** Minutes since the run's first logged line, per run (for x by wall time). */
const startTimes = () =>
  D.runs.map((run) => {
    const ts = [...run.metrics, ...run.evals].map((l) => Date.parse(l.time)).filter(Number.isFinite);
    return ts.length ? Math.min(...ts) : 0;
  });
let T0 = startTimes();

/**
 * One spec's [x, y] points in a run, sorted by x (a repeated x keeps its last line); `keys` collects
 * "file phase key" of what was charted (the figure's data-keys, which the tests read).
 */
function points(run, r, spec, xMode, keys) {
  const byX = new Map();
  for (const line of run[spec.src]) {
    if (typeof line.phase !== "string" || !spec.phase(line.phase)) continue;
    const x = xMode === "time" ? (Date.parse(line.time) - T0[r]) / 60000 : valueAt(line, "step");
    const y = valueAt(line, spec.key);
    if (x === null || !Number.isFinite(x) || y === null) continue;
    byX.set(x, y);
    keys.add(`${spec.src} ${line.phase} ${Array.isArray(spec.key) ? spec.key.join(".") : spec.key}`);
  }
  return [...byX.entries()].sort((a, b) => a[0] - b[0]);
}

/** Exponential moving average with TensorBoard's debiasing, so early points are not pulled to 0. */
function smooth(pts, weight) {
  if (weight <= 0) return pts;
  let last = 0, n = 0;
  return pts.map(([x, y]) => {
    last = last * weight + (1 - weight) * y;
    n++;
    return [x, last / (1 - weight ** n)];
  });
}

/** The series of a chart over every run, with their colours: by metric for one run, by run (dash by metric) else. */
function chartSeries(chart, xMode, keys) {
  const out = [];
  D.runs.forEach((run, r) => {
    const specs = chart.series ?? [
      ...new Set(
        run.evals.filter((l) => chart.categories(String(l.phase))).flatMap((l) => Object.keys(l.byCategory ?? {})),
      ),
    ].sort().map((c) => e(chart.categories, ["byCategory", c, "avg"], c));
    specs.forEach((spec, k) => {
      const pts = points(run, r, spec, xMode, keys);
      if (pts.length === 0) return;
      const several = D.runs.length > 1;
      const colour = PALETTE[(several ? r : k) % PALETTE.length];
      const dash = several ? DASHES[k % DASHES.length] : undefined;
      out.push({ label: several ? `${run.name}: ${spec.label}` : spec.label, colour, dash, pts });
    });
  });
  return out;
}

/**
 * uPlot's aligned data: the union of the series' x values (and the ends of `extent`, where no series has a point),
 * null where a series has no point.
 */
function aligned(series, extent) {
  const xs = [...new Set([...series.flatMap((s) => s.pts.map((p) => p[0])), ...(extent ?? [])])].sort((a, b) => a - b);
  return [
    xs,
    ...series.map((s) => {
      const at = new Map(s.pts);
      return xs.map((x) => (at.has(x) ? at.get(x) : null));
    }),
  ];
}

/** uPlot's padded auto range, but a flat series gets a band around its value instead of [0, 100]. */
function yRange(_u, min, max) {
  if (min !== max) return uPlot.rangeNum(min, max, 0.1, true);
  return [min - (Math.abs(min) || 1), max + (Math.abs(max) || 1)];
}

/** Room for the longest tick label of an axis. */
const axisSize = (_u, values) => Math.max(36, 16 + 6.6 * Math.max(0, ...(values ?? []).map((v) => String(v).length)));

function axis(extra) {
  return {
    stroke: "#3d4457",
    font: "11px system-ui, sans-serif",
    labelFont: "11px system-ui, sans-serif",
    grid: { stroke: "#e6e8f0", width: 1 },
    ticks: { stroke: "#c9cdd9", width: 1, size: 4 },
    values: (_u, splits) => splits.map(fmt),
    ...extra,
  };
}

const drawn = [];

/** A colour at some opacity over white, as a CSS rgb() string (the faint raw points under a smoothed curve). */
function faint(hex, alpha) {
  const n = parseInt(hex.slice(1), 16), mix = (c) => Math.round(255 - alpha * (255 - c));
  return `rgb(${mix(n >> 16)}, ${mix((n >> 8) & 255)}, ${mix(n & 255)})`;
}

/** The single value every point of every series shares, or undefined when any two differ. */
function constantOf(series) {
  const ys = series.flatMap((s) => s.pts.map((p) => p[1]));
  return ys.length > 0 && ys.every((y) => y === ys[0]) ? ys[0] : undefined;
}

/**
 * The x extent of the training steps (RL, SFT, pretraining) in the current x mode, so a chart of evaluations alone
 * spans the same steps as the training charts beside it; undefined when nothing was trained.
 */
function trainingExtent(xMode) {
  const xs = [];
  D.runs.forEach((run, r) => {
    for (const line of run.metrics) {
      const x = xMode === "time" ? (Date.parse(line.time) - T0[r]) / 60000 : valueAt(line, "step");
      if (x !== null && Number.isFinite(x)) xs.push(x);
    }
  });
  return xs.length ? [Math.min(...xs), Math.max(...xs)] : undefined;
}

/** A legend marker as a short line in the series' colour and dash, so runs and metrics both read off the legend. */
function markerSvg(colour, dash) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", "26");
  svg.setAttribute("height", "10");
  const line = document.createElementNS(ns, "line");
  for (const [k, v] of [["x1", 1], ["y1", 5], ["x2", 25], ["y2", 5], ["stroke", colour], ["stroke-width", 2.5]]) {
    line.setAttribute(k, String(v));
  }
  if (dash) line.setAttribute("stroke-dasharray", dash.join(" "));
  svg.appendChild(line);
  return svg;
}

/** Draws the raw points faintly before the series (uPlot's drawAxes hook), clipped to the plot area. */
function rawLayer(raw) {
  return (u) => {
    const ctx = u.ctx, { left, top, width, height } = u.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    for (const s of raw) {
      ctx.strokeStyle = ctx.fillStyle = s.colour;
      ctx.lineWidth = devicePixelRatio;
      ctx.setLineDash(s.dash ?? []);
      ctx.beginPath();
      s.pts.forEach(([x, y], i) => {
        const px = u.valToPos(x, "x", true), py = u.valToPos(y, "y", true);
        i === 0 ? ctx.moveTo(px, py) : ctx.lineTo(px, py);
      });
      ctx.stroke();
      for (const [x, y] of s.pts) {
        ctx.beginPath();
        ctx.arc(u.valToPos(x, "x", true), u.valToPos(y, "y", true), 1.5 * devicePixelRatio, 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    ctx.restore();
  };
}

/** Where constant charts are listed: { title, labels, value } per chart (the tests read `constants`). */
const constants = [];

function drawChart(host, chart, xMode, weight) {
  const keys = new Set();
  const rawSeries = chartSeries(chart, xMode, keys);
  if (rawSeries.length === 0) return false;
  const value = constantOf(rawSeries);
  if (value !== undefined) {
    constants.push({ title: chart.title, labels: rawSeries.map((s) => s.label), value, keys: [...keys] });
    return false;
  }
  const series = rawSeries.map((s) => ({ ...s, pts: smooth(s.pts, weight) }));
  const raw = weight > 0 ? rawSeries.map((s) => ({ ...s, colour: faint(s.colour, 0.3) })) : [];
  const evalsOnly = (chart.series ?? []).every((sp) => sp.src === "evals");
  const extent = evalsOnly ? trainingExtent(xMode) : undefined;
  const fig = el("figure", { class: "chart", "data-chart": chart.title, "data-keys": [...keys].join("\n") });
  fig.appendChild(el("figcaption", {}, chart.title));
  host.appendChild(fig);
  const xLabel = xMode === "time" ? "minutes since start" : "step";
  const opts = {
    width: Math.max(280, fig.clientWidth - 18),
    height: 200,
    cursor: { sync: { key: "crucible" }, drag: { x: true, y: false } },
    scales: { x: { time: false }, y: { range: chart.range ?? yRange } },
    axes: [
      axis({ label: xLabel, size: 34, labelSize: 16, incrs: xMode === "step" ? STEP_INCRS : undefined }),
      axis({ size: axisSize }),
    ],
    series: [
      { label: xLabel, value: (_u, v) => fmt(v) },
      ...series.map((s) => ({
        label: s.label,
        stroke: s.colour,
        fill: undefined,
        width: 1.6,
        dash: s.dash,
        spanGaps: true,
        points: { size: 5, fill: s.colour, stroke: s.colour },
        value: (_u, v) => fmt(v),
      })),
    ],
    hooks: raw.length ? { drawAxes: [rawLayer(raw)] } : {},
    legend: { live: true },
  };
  const data = aligned(series, extent);
  const u = new uPlot(opts, data, fig);
  // Each legend entry in its series' colour; the marker a line in its colour and dash. The CSS never overrides either.
  u.root.querySelectorAll(".u-legend .u-series").forEach((row, i) => {
    if (i === 0) return;
    const s = series[i - 1], marker = row.querySelector(".u-marker");
    row.querySelector(".u-label").style.color = s.colour;
    marker.style.background = "none";
    marker.style.border = "none";
    marker.style.width = "26px";
    marker.dataset.colour = s.colour;
    marker.dataset.dash = s.dash ? s.dash.join(" ") : "solid";
    marker.replaceChildren(markerSvg(s.colour, s.dash));
  });
  drawn.push({ u, fig, raw: raw.length, extent });
  return true;
}

/** Compared runs' key: each run's name in its colour, and what the dashes mean. */
function runKey() {
  const key = el("p", { id: "run-key" });
  D.runs.forEach((run, r) => {
    const item = el("span", { class: "run-key-item" });
    item.appendChild(markerSvg(PALETTE[r % PALETTE.length]));
    const name = el("span", {}, ` ${run.name}`);
    name.style.color = PALETTE[r % PALETTE.length];
    item.appendChild(name);
    key.appendChild(item);
  });
  key.appendChild(el("span", { class: "muted" }, "colour: run; dash: the metric within a chart (see its legend)"));
  return key;
}

/** The "Constant over the run" list: each chart whose points all share one value, with that value. */
function drawConstants(root) {
  if (constants.length === 0) return;
  const section = el("div", { class: "group", "data-group": "Constant over the run" });
  section.appendChild(el("h3", {}, "Constant over the run"));
  const list = el("ul", { id: "constants" });
  for (const c of constants) {
    const li = el("li", { "data-keys": c.keys.join("\n") }, `${c.title}: ${fmt(c.value)}`);
    li.title = c.labels.join(", ");
    list.appendChild(li);
  }
  section.appendChild(list);
  root.appendChild(section);
}

function drawAll() {
  const xMode = document.querySelector('input[name="x-axis"]:checked').value;
  const weight = Number(document.getElementById("smoothing").value);
  document.getElementById("smoothing-value").textContent = weight.toFixed(2);
  while (drawn.length) drawn.pop().u.destroy();
  constants.length = 0;
  const root = document.getElementById("charts");
  root.textContent = "";
  if (D.runs.length > 1) root.appendChild(runKey());
  const shown = root.dataset.groups ? new Set(root.dataset.groups.split("|")) : undefined;
  for (const [title, charts] of CATALOGUE) {
    if (shown && !shown.has(title)) continue;
    const section = el("div", { class: "group", "data-group": title });
    section.appendChild(el("h3", {}, title));
    const grid = el("div", { class: "grid" });
    section.appendChild(grid);
    root.appendChild(section);
    const any = charts.map((c) => drawChart(grid, c, xMode, weight)).some(Boolean);
    if (!any) section.remove();
  }
  drawConstants(root);
  if (drawn.length === 0 && constants.length === 0) {
    root.appendChild(el("p", { class: "muted" }, "no metrics logged yet"));
  }
}

document.getElementById("smoothing").addEventListener("input", drawAll);
for (const r of document.querySelectorAll('input[name="x-axis"]')) r.addEventListener("change", drawAll);
addEventListener("resize", () => {
  for (const { u, fig } of drawn) u.setSize({ width: Math.max(280, fig.clientWidth - 18), height: 200 });
});
drawAll();

/** For a live page: draws every chart again over `data` (the shape of the report's data element). */
globalThis.reportCharts = {
  redraw(data) {
    D = data;
    T0 = startTimes();
    CATALOGUE = [...GROUPS, ["Other", otherCharts()]];
    drawAll();
  },
};
