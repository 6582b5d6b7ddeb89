/**
 * The page's file tree, and its `Deno` installed over it as this module is evaluated: the studio page's script
 * imports this module first, so that every module of the training path finds `Deno` (memory_deno.ts) from its start.
 * Kernel tuning stays off in the page (CRUCIBLE_TUNE=off: the seeded variants, as the tests and CPU rasterisers use,
 * and no cache file).
 */
import { installMemoryDeno, MemoryFiles } from "./memory_deno.ts";

/** The page's files: the model folder it loaded, the run folder it writes. */
export const pageFiles: MemoryFiles = new MemoryFiles();

installMemoryDeno(pageFiles, { CRUCIBLE_TUNE: "off", CRUCIBLE_KERNEL_CACHE: "off" });
