/**
 * Every op's benchmark cases. To add an op, write src/cli/bench/<op>.ts calling `registerBench` (see registry.ts)
 * and import it here; `deno task bench kernels` then times it on every adapter.
 */
import "./matmul.ts";

export { benchCases, caseLabel } from "./registry.ts";
