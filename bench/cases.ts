/**
 * Every op's benchmark cases. To add an op, write bench/<op>.ts calling `registerBench` (see registry.ts)
 * and import it here; `deno task bench kernels` then times it on every adapter, in this order.
 */
import "./matmul.ts";
import "./attention.ts";
import "./embedding.ts";
import "./rmsnorm.ts";
import "./rope.ts";
import "./swiglu.ts";
import "./logprob.ts";
import "./kvcache.ts";
import "./sample.ts";
import "./optimizer.ts";
import "./policy_loss.ts";

export { benchCases, caseLabel } from "./registry.ts";
