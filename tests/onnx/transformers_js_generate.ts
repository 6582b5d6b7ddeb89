// Greedy generation with @huggingface/transformers (transformers.js) from an exported directory, for
// transformers_js_test.ts: `deno run -A --no-config --frozen --lock=tests/onnx/transformers_js.lock
// --node-modules-dir=none tests/onnx/transformers_js_generate.ts DIR 3,7,2 16` prints {"ids": [...new ids],
// "runtime": "..."}. Its packages (transformers.js pulls onnxruntime-node, onnxruntime-web and sharp, about 500 MB)
// are pinned in their own lockfile and kept in Deno's global cache, so the test suite's node_modules does not carry
// them. --no-config keeps deno.json's imports out of that lockfile (Deno writes them into its "workspace" section,
// so each new import in deno.json rewrote it), and --frozen makes Deno only read it: a lockfile that no longer
// matches fails the test with Deno's "The lockfile is out of date" and the changes, instead of being rewritten.
// After changing TRANSFORMERS, rerun the line above with --frozen=false to update the lockfile.
const TRANSFORMERS = "npm:@huggingface/transformers@4.3.1";
const tf = await import(TRANSFORMERS);
const [dir, prompt, maxNew] = Deno.args;
const at = dir.replace(/\/+$/, "").lastIndexOf("/");
tf.env.allowRemoteModels = false;
tf.env.localModelPath = dir.slice(0, at + 1);
const model = await tf.AutoModelForCausalLM.from_pretrained(dir.slice(at + 1), { dtype: "fp32" });
const ids = prompt.split(",").map((s) => BigInt(s));
const input = new tf.Tensor("int64", BigInt64Array.from(ids), [1, ids.length]);
const out = await model.generate({
  input_ids: input,
  attention_mask: new tf.Tensor("int64", new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
  max_new_tokens: Number(maxNew),
  do_sample: false,
});
const all = (out.tolist()[0] as bigint[]).map(Number);
console.log(JSON.stringify({ ids: all.slice(ids.length), runtime: tf.env.backends.onnx?.versions ?? null }));
