/**
 * `deno task config [NAME|CONFIG.yaml] [key.path=value ...]`: prints the resolved run configuration as YAML (every
 * key, defaults filled, overrides and verl aliases applied), as verl's `--cfg job` does, without running anything.
 * `deno task config --explain KEY` prints one key's meaning, type, default and verl/TRL names (src/config/explain.ts);
 * `--algorithms` lists the registered advantage estimators and policy losses with the config keys each reads.
 */
import { stringify } from "yaml";
import { resolveConfig } from "../config/load.ts";
import { explainAlgorithms, explainKey } from "../config/explain.ts";
import { configSource, PRESET_NAMES } from "../config/presets.ts";
import { curriculumConfigs, isCurriculum } from "../train/curriculum.ts";
import { taskOptions } from "../train/setup.ts";
import { parseFlags } from "../command/args.ts";

const USAGE = `Usage: deno task config [NAME|CONFIG.yaml] [key.path=value ...]
       deno task config --explain KEY
       deno task config --algorithms

Prints the resolved configuration of a run: the config file over the schema's defaults, with the overrides
applied last (verl's and AgentGym-RL's dotted names and Hydra's +key=value are accepted), and the task's own options
(task_options) checked and filled by the task.

Options:
  NAME|CONFIG.yaml   a shipped config (${PRESET_NAMES.join(", ")}) or a YAML file; default textcraft
  key.path=value     overrides, as deno task train takes them
  --explain KEY      what KEY means, its type, default, and its names in verl and TRL (KEY may be verl's name;
                     a section such as actor lists its keys; algorithm.adv_estimator and actor.policy_loss
                     list the registered algorithms)
  --algorithms       every registered advantage estimator and policy loss, with the config keys each reads

Examples:
  deno task config textcraft
  deno task config textcraft actor_rollout_ref.actor.optim.lr=1e-6 algorithm.rounds_ctrl.rounds=20
  deno task config --explain actor.clip_ratio_high
  deno task config --explain algorithm.adv_estimator
  deno task config --algorithms`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task config", {
    args,
    allowPositionals: true,
    options: {
      explain: { type: "string" },
      algorithms: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  if (v.algorithms) {
    if (positionals.length || v.explain !== undefined) {
      throw new TypeError(`--algorithms takes nothing else, got also ${[...positionals, "--explain"].join(" ")}`);
    }
    return console.log(explainAlgorithms());
  }
  if (v.explain !== undefined) {
    if (positionals.length) throw new TypeError(`--explain takes one key and nothing else, got also ${positionals}`);
    return console.log(explainKey(v.explain));
  }
  const overrides = positionals.filter((p) => p.includes("="));
  const names = positionals.filter((p) => !p.includes("="));
  if (names.length > 1) throw new TypeError(`Give one config name or file, got ${names.join(", ")}. See --help.`);
  const onNote = (n: string) => console.error(`note: ${n}`);
  const source = await configSource(names[0] ?? "textcraft");
  if (isCurriculum(source)) {
    // A curriculum: each stage's run config, later ones from a stand-in for the previous stage's checkpoint.
    const { spec, stageConfig } = await curriculumConfigs(source, overrides, onNote);
    spec.stages.forEach((stage, i) => {
      const config = stageConfig(i, i === 0 ? undefined : `<stage ${i}'s last checkpoint>`);
      const rule = stage.promote ? `, promoted at ${stage.promote.metric} > ${stage.promote.above}` : "";
      console.log(`# stage ${i + 1}: ${stage.name}${rule}`);
      console.log(stringify({ ...config, task_options: { ...taskOptions(config) } }).trimEnd());
    });
    return;
  }
  const config = resolveConfig(source, overrides, { onNote });
  console.log(stringify({ ...config, task_options: { ...taskOptions(config) } }).trimEnd());
}
