// The report's evaluation table, episode browser and summary. Runs after charts.js and uses its D, el()
// and fmt(). Episodes carry `category` (TextCraft: depth), added when the report was built; "" when unknown; and
// `label` where the task names its tasks (BFCL: the entry's id).

const pct = (v) => (typeof v === "number" ? (100 * v).toFixed(1) + "%" : "");
/** The tasks an evaluation covers, as the terminal prints it: "20 of 100 test", "all 100 test", or just a count. */
const covered = (ev) =>
  typeof ev.splitTasks !== "number"
    ? String(ev.tasks ?? "")
    : ev.tasks === ev.splitTasks
    ? `all ${ev.tasks} ${ev.split ?? ""}`.trim()
    : `${ev.tasks} of ${ev.splitTasks} ${ev.split ?? ""}`.trim();
const several = D.runs.length > 1;

function evalTable() {
  const host = document.getElementById("evals");
  const rows = D.runs.flatMap((run) => run.evals.map((ev) => ({ run: run.name, ev })));
  if (rows.length === 0) return host.appendChild(el("p", { class: "muted" }, "no evaluation yet"));
  const cats = [...new Set(rows.flatMap((r) => Object.keys(r.ev.byCategory ?? {})))].sort();
  const copy = rows.some((r) => r.ev.copy);
  const samples = rows[0].ev.samples ?? 1;
  const head = [
    ...(several ? ["run"] : []),
    "phase",
    "step",
    "tasks",
    `success (Avg@${samples})`,
    `Pass@${samples}`,
    "mean reward",
    "env failures",
    ...cats,
    ...(copy ? ["names copied", "replies exact", "reply NLL"] : []),
  ];
  const table = el("table", { id: "eval-table" });
  const tr = el("tr");
  for (const h of head) tr.appendChild(el("th", {}, h));
  table.appendChild(tr);
  for (const { run, ev } of rows) {
    const byCat = ev.byCategory ?? {};
    const cells = [
      ...(several ? [run] : []),
      ev.phase,
      ev.step,
      covered(ev),
      pct(ev.avg),
      pct(ev.pass),
      fmt(ev.meanReward),
      ev.envFailures ?? "",
      ...cats.map((c) => (byCat[c] ? `${pct(byCat[c].avg)} of ${byCat[c].tasks}` : "")),
      ...(copy ? [pct(ev.copy?.names), pct(ev.copy?.replies), ev.copy ? fmt(ev.copy.nll) : ""] : []),
    ];
    const row = el("tr");
    for (const c of cells) row.appendChild(el("td", {}, String(c)));
    table.appendChild(row);
  }
  host.appendChild(table);
}

const EPISODES = D.runs.flatMap((run, r) => run.episodes.map((ep) => ({ ...ep, run: r })));
const stepKey = (ep) => `${ep.phase} step ${ep.step}`;

function select(id, label, options) {
  const s = el("select", { id, "aria-label": label });
  for (const [value, text] of options) s.appendChild(el("option", { value }, text));
  return s;
}

function filters() {
  const host = document.getElementById("episode-filters");
  const add = (label, control) => {
    const l = el("label", {}, label + " ");
    l.appendChild(control);
    host.appendChild(l);
    control.addEventListener(control.tagName === "INPUT" ? "input" : "change", update);
  };
  if (several) add("run", select("f-run", "run", [["", "all"], ...D.runs.map((r, i) => [String(i), r.name])]));
  add("outcome", select("f-success", "outcome", [["", "all"], ["solved", "solved only"], ["failed", "not solved"]]));
  const cats = [...new Set(EPISODES.map((ep) => ep.category ?? ""))].sort();
  add("category", select("f-category", "category", [["*", "all"], ...cats.map((c) => [c, c || "(unknown)"])]));
  const steps = [...new Set(EPISODES.map(stepKey))];
  add("step", select("f-step", "step", [["", "all"], ...steps.map((s) => [s, s])]));
  add("task", el("input", { id: "f-task", type: "number", min: "0", placeholder: "any" }));
  add("search", el("input", { id: "f-search", type: "search", placeholder: "text in any turn" }));
  host.appendChild(el("span", { id: "episode-count", class: "muted" }));
}

function episodeText(ep) {
  const turns = (ep.turns ?? []).map((t) => `${t.text}\n${t.action ?? ""}\n${t.observation}`);
  return [ep.label ?? "", ep.first, ep.finish, ep.error ?? "", ...turns].join("\n").toLowerCase();
}

function matching() {
  const v = (id) => document.getElementById(id)?.value ?? "";
  const run = v("f-run"), outcome = v("f-success"), cat = v("f-category"), step = v("f-step");
  const task = v("f-task").trim(), text = v("f-search").trim().toLowerCase();
  return EPISODES.map((ep, i) => [ep, i]).filter(([ep]) =>
    (run === "" || ep.run === Number(run)) &&
    (outcome === "" || (outcome === "solved") === Boolean(ep.success)) &&
    (cat === "*" || (ep.category ?? "") === cat) &&
    (step === "" || stepKey(ep) === step) &&
    (task === "" || ep.task === Number(task)) &&
    (text === "" || episodeText(ep).includes(text))
  );
}

const list = document.getElementById("episode-list"), view = document.getElementById("episode");

function update() {
  const shown = matching();
  const keep = list.value;
  list.textContent = "";
  for (const [ep, i] of shown) {
    const where = several ? D.runs[ep.run].name + " " : "";
    const tags = (ep.label ? " " + ep.label : "") + (ep.category ? " " + ep.category : "");
    const text = `${ep.success ? "✓" : "✗"} ${where}${stepKey(ep)} task ${ep.task}${tags} (${ep.rounds} rounds)`;
    list.appendChild(el("option", { value: String(i) }, text));
  }
  document.getElementById("episode-count").textContent = `${shown.length} of ${EPISODES.length} episodes` +
    leftOutNote();
  const still = shown.some(([, i]) => String(i) === keep);
  list.value = still ? keep : shown.length ? String(shown[0][1]) : "";
  show(list.value === "" ? -1 : Number(list.value));
}

/**
 * What the page did not embed, so its counts match rollouts.jsonl: "; the log holds 188: not loaded 20 eval-rl" (the
 * page keeps the first and last evaluation and the latest RL steps).
 */
function leftOutNote() {
  const logged = D.runs.reduce((a, run) => a + (run.episodesLogged ?? run.episodes.length), 0);
  if (logged === EPISODES.length) return "";
  const byPhase = {};
  for (const run of D.runs) {
    for (const [p, n] of Object.entries(run.episodesLeftOut ?? {})) byPhase[p] = (byPhase[p] ?? 0) + n;
  }
  const parts = Object.entries(byPhase).map(([p, n]) => `${n} ${p}`).join(", ");
  return `; the log holds ${logged}, not loaded: ${parts} (the page keeps the first and last evaluation ` +
    "and the latest RL episodes)";
}

function show(i) {
  const ep = EPISODES[i];
  view.textContent = "";
  if (!ep) return view.appendChild(el("p", { class: "muted" }, "no episode matches the filters"));
  const facts = [
    ep.success ? "solved" : "not solved",
    `reward ${fmt(ep.reward)}`,
    ep.finish,
    `${ep.rounds} rounds`,
    `${ep.responseTokens ?? "?"} response tokens`,
    `task ${ep.task}`,
    ep.label,
    ep.category,
    `${ep.phase}, step ${ep.step}`,
    several ? D.runs[ep.run].name : "",
  ].filter(Boolean);
  view.appendChild(el("p", { class: ep.success ? "ok" : "bad" }, facts.join(" · ")));
  if (ep.error) view.appendChild(el("p", { class: "bad" }, "error: " + ep.error));
  view.appendChild(el("pre", { class: "turn obs" }, ep.first));
  (ep.turns ?? []).forEach((t, k) => {
    const d = el("div", { class: "turn" });
    d.appendChild(el("div", { class: "turn-head" }, `turn ${k + 1} · reward ${fmt(t.reward)}`));
    const m = /^([\s\S]*?)Action:/.exec(t.text ?? "");
    const thought = m ? m[1].replace(/^\s*Thought:\s*/, "").trim() : "";
    if (thought) d.appendChild(el("pre", {}, "Thought: " + thought));
    d.appendChild(el("pre", {}, "Action: " + (t.action === null ? "(none: " + t.text + ")" : t.action)));
    view.appendChild(d);
    view.appendChild(el("pre", { class: "turn obs" }, t.observation));
  });
}

function summary() {
  const line = (run) => {
    const rl = run.metrics.filter((l) => l.phase === "rl").length;
    const pre = run.metrics.filter((l) => l.phase === "pretrain").length;
    const first = run.evals.find((l) => l.phase === "sft"), final = run.evals.filter((l) => l.phase === "final").pop();
    const held = run.evals.filter((l) => l.phase === "pretrain").pop();
    const parts = [
      first ? `Test success after SFT ${pct(first.avg)} (on ${covered(first)} tasks).` : "",
      final ? `After RL ${pct(final.avg)} (on ${covered(final)} tasks).` : "",
      held ? `Held-out success at step ${held.step}: ${pct(held.avg)}.` : "",
      held?.copy ? `Names copied ${pct(held.copy.names)}, replies exact ${pct(held.copy.replies)}.` : "",
      rl ? `${rl} RL steps logged.` : "",
      pre ? `${pre} pretraining steps logged.` : "",
    ].filter(Boolean);
    return (several ? run.name + ": " : "") + (parts.join(" ") || "Nothing logged yet.");
  };
  const host = document.getElementById("summary");
  for (const run of D.runs) host.appendChild(el("p", {}, line(run)));
}

evalTable();
filters();
list.addEventListener("change", () => show(Number(list.value)));
update();
summary();
