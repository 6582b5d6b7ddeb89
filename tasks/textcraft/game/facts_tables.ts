/**
 * The facts `minecraft-data` cannot supply and the upstream recipe JSONs carry: which expanded ingredient sets are
 * tags and which are lists, the recipe groups, and the input order of the shaped recipes whose JSON key order differs
 * from row-major order. Used only by `facts_gen.ts`.
 */

/** The six overworld woods, in vanilla tag order. */
export const WOODS = ["oak", "spruce", "birch", "jungle", "acacia", "dark_oak"] as const;
/** The two nether stems. */
export const STEMS = ["crimson", "warped"] as const;
const WOODS8 = [...WOODS, ...STEMS];
/** The sixteen dye colours, in vanilla order. */
export const COLOURS = [
  "white",
  "orange",
  "magenta",
  "light_blue",
  "yellow",
  "lime",
  "pink",
  "gray",
  "light_gray",
  "cyan",
  "purple",
  "blue",
  "brown",
  "green",
  "red",
  "black",
] as const;

function woodLogs(w: string): string[] {
  return (STEMS as readonly string[]).includes(w)
    ? [`${w}_stem`, `stripped_${w}_stem`, `${w}_hyphae`, `stripped_${w}_hyphae`]
    : [`${w}_log`, `${w}_wood`, `stripped_${w}_log`, `stripped_${w}_wood`];
}

/**
 * Table A: an expanded ingredient set (sorted, joined by spaces) -> the tag TextCraft shows for it. Tags that no
 * crafted item belongs to become pseudo-items at load time (`oak_logs`); only `planks` and `wool` stay tags.
 */
export const TAG_OF_SET: ReadonlyMap<string, string> = new Map([
  [setKey(WOODS8.map((w) => `${w}_planks`)), "planks"],
  [setKey(COLOURS.map((c) => `${c}_wool`)), "wool"],
  [setKey(WOODS8.flatMap(woodLogs)), "logs"],
  ...WOODS.map((w) => [setKey(woodLogs(w)), `${w}_logs`] as [string, string]),
  ...STEMS.map((s) => [setKey(woodLogs(s)), `${s}_stems`] as [string, string]),
  [setKey(WOODS8.map((w) => `${w}_slab`)), "wooden_slabs"],
  [setKey(["cobblestone", "blackstone"]), "stone_tool_materials"],
  [setKey(["coal", "charcoal"]), "coals"],
  [setKey(["soul_sand", "soul_soil"]), "soul_fire_base_blocks"],
]);

/** Outputs whose vanilla recipe uses `stone_crafting_materials`, the same set as `stone_tool_materials`. */
export const TAG_OVERRIDE: ReadonlyMap<string, string> = new Map([
  ["furnace", "stone_crafting_materials"],
  ["brewing_stand", "stone_crafting_materials"],
]);

/** Table B: outputs whose ingredient is a list of alternatives upstream; TextCraft keeps the first, given here. */
export const LIST_FIRST: ReadonlyMap<string, string> = new Map([
  ["torch", "coal"],
  ["soul_torch", "coal"],
  ["fire_charge", "coal"],
  ["tnt", "sand"],
  ["purpur_slab", "purpur_block"],
  ["purpur_stairs", "purpur_block"],
  ["quartz_slab", "chiseled_quartz_block"],
  ["quartz_stairs", "chiseled_quartz_block"],
  ["sandstone_slab", "sandstone"],
  ["sandstone_stairs", "sandstone"],
  ["red_sandstone_slab", "red_sandstone"],
  ["red_sandstone_stairs", "red_sandstone"],
]);

/** The canonical key of an item set. */
export function setKey(items: readonly string[]): string {
  return [...new Set(items)].sort().join(" ");
}

const WOOD_SUFFIX_GROUPS: [string, string, readonly string[]][] = [
  ["planks", "planks", WOODS8],
  ["button", "wooden_button", WOODS8],
  ["door", "wooden_door", WOODS8],
  ["fence", "wooden_fence", WOODS8],
  ["fence_gate", "wooden_fence_gate", WOODS8],
  ["pressure_plate", "wooden_pressure_plate", WOODS8],
  ["slab", "wooden_slab", WOODS8],
  ["stairs", "wooden_stairs", WOODS8],
  ["trapdoor", "wooden_trapdoor", WOODS8],
  ["sign", "sign", WOODS8],
  ["boat", "boat", WOODS],
];
const COLOUR_SUFFIX_GROUPS: [string, string][] = [
  ["banner", "banner"],
  ["carpet", "carpet"],
  ["concrete_powder", "concrete_powder"],
  ["stained_glass", "stained_glass"],
  ["stained_glass_pane", "stained_glass_pane"],
  ["terracotta", "stained_terracotta"],
];
/** Outputs whose group is their own id: the group makes no tag, but the recipes are also filed under it. */
const SELF_GROUPS = new Set([
  ...["black", "blue", "brown", "light_blue", "light_gray", "magenta", "orange", "pink", "red", "white", "yellow"]
    .map((c) => `${c}_dye`),
  "gold_ingot",
  "iron_ingot",
  "netherite_ingot",
  "rabbit_stew",
  "sugar",
]);

/** Table C: the `group` a vanilla recipe carries, from its output and input names, or null for none. */
export function groupOf(output: string, inputs: readonly string[]): string | null {
  for (const [suffix, group, woods] of WOOD_SUFFIX_GROUPS) {
    if (woods.some((w) => output === `${w}_${suffix}`)) return group;
  }
  for (const w of WOODS) if (output === `${w}_wood` || output === `stripped_${w}_wood`) return "bark";
  for (const s of STEMS) if (output === `${s}_hyphae` || output === `stripped_${s}_hyphae`) return "bark";
  for (const c of COLOURS) {
    for (const [suffix, group] of COLOUR_SUFFIX_GROUPS) if (output === `${c}_${suffix}`) return group;
    if (output === `${c}_bed`) return inputs.includes("white_bed") ? "dyed_bed" : "bed";
    if (output === `${c}_wool` && inputs.includes(`${c}_dye`)) return "wool";
  }
  if (output === "stick") return "sticks";
  if (output === "bone_meal") return "bonemeal";
  return SELF_GROUPS.has(output) ? output : null;
}

const TOOLS = ["axe", "hoe", "pickaxe", "shovel", "sword"];
const TOOL_MATERIALS: [string, string][] = [
  ["wooden", "planks"],
  ["stone", "stone_tool_materials"],
  ["iron", "iron_ingot"],
  ["golden", "gold_ingot"],
  ["diamond", "diamond"],
];

/**
 * Upstream input order for the 71 shaped recipes whose JSON key order is not row-major (Mojang's own definition
 * order, which `minecraft-data` does not keep). Output -> input names in upstream order.
 */
export const UPSTREAM_ORDER: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ...TOOL_MATERIALS.flatMap(([m, input]) => TOOLS.map((t) => [`${m}_${t}`, ["stick", input]] as [string, string[]])),
  ...WOODS8.map((w) => [`${w}_fence`, ["stick", `${w}_planks`]] as [string, string[]]),
  ["activator_rail", ["redstone_torch", "stick", "iron_ingot"]],
  ["arrow", ["stick", "flint", "feather"]],
  ["beacon", ["nether_star", "glass", "obsidian"]],
  ["blast_furnace", ["smooth_stone", "furnace", "iron_ingot"]],
  ["cake", ["milk_bucket", "sugar", "wheat", "egg"]],
  ["campfire", ["logs", "stick", "coals"]],
  ["cartography_table", ["planks", "paper"]],
  ["chain", ["iron_ingot", "iron_nugget"]],
  ["crossbow", ["string", "stick", "iron_ingot", "tripwire_hook"]],
  ["daylight_detector", ["quartz", "glass", "wooden_slabs"]],
  ["detector_rail", ["redstone", "stone_pressure_plate", "iron_ingot"]],
  ["diorite", ["quartz", "cobblestone"]],
  ["dispenser", ["redstone", "cobblestone", "bow"]],
  ["dropper", ["redstone", "cobblestone"]],
  ["enchanting_table", ["book", "obsidian", "diamond"]],
  ["end_crystal", ["ghast_tear", "ender_eye", "glass"]],
  ["end_rod", ["popped_chorus_fruit", "blaze_rod"]],
  ["fletching_table", ["planks", "flint"]],
  ["hopper", ["chest", "iron_ingot"]],
  ["lantern", ["torch", "iron_nugget"]],
  ["lever", ["cobblestone", "stick"]],
  ["loom", ["planks", "string"]],
  ["observer", ["quartz", "redstone", "cobblestone"]],
  ["piston", ["redstone", "cobblestone", "planks", "iron_ingot"]],
  ["powered_rail", ["redstone", "stick", "gold_ingot"]],
  ["rail", ["stick", "iron_ingot"]],
  ["red_nether_bricks", ["nether_wart", "nether_brick"]],
  ["redstone_torch", ["stick", "redstone"]],
  ["scaffolding", ["string", "bamboo"]],
  ["shulker_box", ["chest", "shulker_shell"]],
  ["smithing_table", ["planks", "iron_ingot"]],
  ["soul_campfire", ["logs", "stick", "soul_fire_base_blocks"]],
  ["soul_lantern", ["soul_torch", "iron_nugget"]],
  ["sticky_piston", ["piston", "slime_ball"]],
  ["target", ["hay_block", "redstone"]],
  ["tnt", ["sand", "gunpowder"]],
  ["torch", ["stick", "coal"]],
  ["tripwire_hook", ["planks", "stick", "iron_ingot"]],
]);
