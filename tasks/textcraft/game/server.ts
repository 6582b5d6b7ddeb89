/**
 * Crucible's TextCraft server: TextCraft's games over the crafting tree (`game.ts`, `tree.ts`), served by the game
 * server of AgentGym's protocol (src/env/server/serve.ts: upstream's routes, JSON shapes and messages, and the
 * guards beyond upstream), on upstream's port 36001 by default. The words and the game are TextCraft's; the protocol,
 * the id table and the request guards are the generic server's, which BFCL's server shares.
 *
 * @example
 * ```ts
 * const server = await serveTextCraft({ port: 0 });
 * const headers = { "content-type": "application/json" };
 * const res = await fetch(`${server.url}/create`, { method: "POST", headers, body: "{}" });
 * console.log(await res.json()); // {id: 5871243096151183, observation: "Crafting commands:\n...", ...}
 * await server.shutdown();
 * ```
 */
import {
  type GameHandler,
  gameHandler,
  type GameServer,
  type GameServerOptions,
  type ServedGame,
  serveGames,
} from "../../../src/env/server/serve.ts";
import { TextCraftGame } from "./game.ts";
import { CraftingTree } from "./tree.ts";

/** Server settings; all optional. */
export interface TextCraftServerOptions extends GameServerOptions {
  /** A loaded tree to share (tests load it once). */
  tree?: CraftingTree;
  /** Games to serve instead of TextCraft's own over the tree (e.g. synthetic worlds, one per task index). */
  games?: () => ServedGame;
}

/** A running TextCraft server. */
export type TextCraftServer = GameServer;

/** TextCraft's defaults over the generic server's: its title and upstream's port. */
function withDefaults(options: GameServerOptions): GameServerOptions {
  return { ...options, title: options.title ?? "TextCraft", port: options.port ?? 36001 };
}

/**
 * Builds the request handler (exported for in-process tests and for embedding in another server) over TextCraft's
 * games on `tree`, or over `newGame`'s games.
 */
export function textCraftHandler(
  source: CraftingTree | (() => ServedGame),
  options: TextCraftServerOptions = {},
): GameHandler {
  const newGame = typeof source === "function" ? source : () => new TextCraftGame(source);
  return gameHandler(newGame, withDefaults(options));
}

/** Starts a TextCraft server and resolves once it listens; warns (see `warn`) when bound beyond loopback. */
export async function serveTextCraft(options: TextCraftServerOptions = {}): Promise<TextCraftServer> {
  const source = options.games ?? options.tree ?? await CraftingTree.load();
  const newGame = typeof source === "function" ? source : () => new TextCraftGame(source);
  return await serveGames(newGame, withDefaults(options));
}

/** TextCraft as another server embeds it (the play page): its title, its task count and a handler per setting. */
export async function embeddedTextCraft(tree?: CraftingTree): Promise<{
  title: string;
  tasks: number;
  handler(options: GameServerOptions): GameHandler;
}> {
  const loaded = tree ?? await CraftingTree.load();
  return { title: "TextCraft", tasks: loaded.goals.length, handler: (options) => textCraftHandler(loaded, options) };
}
