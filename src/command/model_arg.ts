/**
 * A command's `--model` as a local directory: a path is used as is, a Hugging Face Hub name (`org/name`, or
 * `org/name@revision`) is taken from the Hugging Face cache or downloaded into it with a progress bar in MB on
 * stderr (src/model/hub.ts, through src/train/setup.ts's localModelPath, which `deno task train` uses too).
 */
import { localModelPath } from "../train/setup.ts";
import { terminalReporter } from "./progress.ts";
import type { Reporter } from "../train/types.ts";

/**
 * The local directory of a model argument.
 *
 * @example
 * ```ts
 * const dir = await localModel("Qwen/Qwen2.5-0.5B-Instruct"); // downloads once, then reads the cache
 * ```
 */
export function localModel(spec: string, reporter: Reporter = terminalReporter()): Promise<string> {
  return localModelPath(spec, reporter);
}
