/**
 * The configs shipped in configs/, imported as text so the bundled program carries them. `deno task train NAME`
 * picks one by name; a path to a YAML file works too.
 */
import babyai from "../../configs/babyai.yaml" with { type: "text" };
import bfcl from "../../configs/bfcl.yaml" with { type: "text" };
import bfclSingle from "../../configs/bfcl_single.yaml" with { type: "text" };
import bfclPretrain from "../../configs/bfcl_pretrain.yaml" with { type: "text" };
import bfclStage1 from "../../configs/bfcl_stage1.yaml" with { type: "text" };
import bfclStage2 from "../../configs/bfcl_stage2.yaml" with { type: "text" };
import bfclStage3 from "../../configs/bfcl_stage3.yaml" with { type: "text" };
import sciworld from "../../configs/sciworld.yaml" with { type: "text" };
import textcraft from "../../configs/textcraft.yaml" with { type: "text" };
import textcraftQwen from "../../configs/textcraft_qwen2.5.yaml" with { type: "text" };
import textcraftPretrain from "../../configs/textcraft_pretrain.yaml" with { type: "text" };
import textcraftSmoke from "../../configs/textcraft_smoke.yaml" with { type: "text" };
import textcraftRl from "../../configs/textcraft_rl.yaml" with { type: "text" };
import textcraftBase from "../../configs/textcraft_base.yaml" with { type: "text" };
import textcraftEto from "../../configs/textcraft_eto.yaml" with { type: "text" };
import textcraftAgentEvol from "../../configs/textcraft_agentevol.yaml" with { type: "text" };
import webshopEto from "../../configs/webshop_eto.yaml" with { type: "text" };
import webshop from "../../configs/webshop.yaml" with { type: "text" };
import webshopQwen from "../../configs/webshop_qwen2.5.yaml" with { type: "text" };
import webshopPretrain from "../../configs/webshop_pretrain.yaml" with { type: "text" };
import { closest } from "./load.ts";
import type { ConfigSource } from "./load.ts";

const PRESETS: Record<string, string> = {
  textcraft,
  textcraft_smoke: textcraftSmoke,
  textcraft_rl: textcraftRl,
  "textcraft_qwen2.5": textcraftQwen,
  textcraft_pretrain: textcraftPretrain,
  textcraft_base: textcraftBase,
  textcraft_eto: textcraftEto,
  textcraft_agentevol: textcraftAgentEvol,
  webshop,
  "webshop_qwen2.5": webshopQwen,
  webshop_pretrain: webshopPretrain,
  webshop_eto: webshopEto,
  babyai,
  sciworld,
  bfcl,
  bfcl_single: bfclSingle,
  bfcl_pretrain: bfclPretrain,
  bfcl_stage1: bfclStage1,
  bfcl_stage2: bfclStage2,
  bfcl_stage3: bfclStage3,
};

/** Names of the shipped configs. */
export const PRESET_NAMES = Object.keys(PRESETS);

/** A shipped config by name, or a YAML file by path. */
export async function configSource(nameOrPath: string): Promise<ConfigSource> {
  if (Object.hasOwn(PRESETS, nameOrPath)) return { text: PRESETS[nameOrPath], name: `configs/${nameOrPath}.yaml` };
  if (/\.ya?ml$/.test(nameOrPath)) {
    try {
      return { text: await Deno.readTextFile(nameOrPath), name: nameOrPath };
    } catch (e) {
      throw new Deno.errors.NotFound(`Config file ${nameOrPath} cannot be read: ${(e as Error).message}`);
    }
  }
  const near = closest(nameOrPath, PRESET_NAMES);
  throw new RangeError(
    `Unknown config "${nameOrPath}"; ${near ? `did you mean "${near}"? Use` : "use"} one of ${
      PRESET_NAMES.join(", ")
    } or a path to a .yaml file`,
  );
}
