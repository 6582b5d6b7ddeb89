// `deno task play` in a real browser (Debian's chromium through playwright-core): the page says how to play and warns
// on a task deeper than the agent's evaluation shows it can plan; the agent, running in the page on
// onnxruntime-web's wasm backend, suggests a move that the person takes and then plays a depth-1 task to success;
// no console error, no request beyond the play server; a task index out of range shows the server's error and
// leaves the page usable. Screenshots in test-artifacts/play/. And `play` on a port in use says so.
import assert from "node:assert/strict";
import { loadForExport } from "../../src/onnx/export.ts";
import { servePlay } from "../../src/play/server.ts";
import { readAgentSettings } from "../../src/train/agent_settings.ts";
import { embeddedTextCraft } from "../../tasks/textcraft/game/server.ts";
import { screenshot, withBrowser } from "../browser.ts";
import { noGpu } from "../no_gpu.ts";
import { saveTestModel, testModels } from "../onnx/models.ts";
import { runDeno, TASK_FLAGS } from "../subprocess.ts";
import { hasTrained, solver } from "./solver.ts";

Deno.test({
  name: "the play page: the agent suggests a move, then plays a depth-1 task to success in the browser",
  // The fine-tuned stand-in needs a GPU adapter to train; a trained models/crucible-tiny does not.
  ignore: !hasTrained && noGpu,
  async fn() {
    const { dir, task, source } = await solver();
    const agent = await readAgentSettings(dir);
    const server = await servePlay({
      game: await embeddedTextCraft(),
      model: await loadForExport(dir),
      modelName: source,
      settings: {
        prompt: agent!.prompt,
        maxRounds: agent!.max_rounds,
        maxTokensPerTurn: agent!.max_tokens_per_turn,
        maxLen: agent!.max_prompt_length + agent!.max_response_length,
        temperature: 0,
        skill: { source: "the test's evaluation", byDepth: { "1": 1, "2": 0 } },
      },
      port: 0,
    });
    try {
      await withBrowser(async (open) => {
        const { page, errors } = await open(server.url);
        const foreign: string[] = [];
        page.on("request", (r) => {
          if (!r.url().startsWith(`${server.url}/`) && !r.url().startsWith("data:")) foreign.push(r.url());
        });
        await page.waitForSelector("body[data-model=ready]", { state: "attached", timeout: 120_000 });
        assert.match(await page.textContent("#how-to") ?? "", /get 1 oak log.*craft.*inventory.*A task's depth is/s);
        assert.match(await page.textContent("#task-range") ?? "", /depth 1: 0-139, depth 2: 140-419/);

        // A depth-2 task, where the agent's evaluation solved none: the page warns before the game starts.
        await page.fill("#task", "140");
        await page.waitForSelector("body[data-depth-warning=yes]", { state: "attached" });
        assert.match(
          await page.textContent("#depth-note") ?? "",
          /^This agent solved none of the depth-2 tasks in its evaluation \(the test's evaluation\): it cannot plan/,
        );
        await screenshot(page, "play/depth-warning");
        await page.fill("#task", String(task));
        await page.waitForSelector("body[data-depth-warning=no]", { state: "attached" });
        await page.click("#new");
        await page.waitForSelector("body[data-game=playing]", { state: "attached" });
        assert.match(await page.textContent("#log") ?? "", /Crafting commands:/);

        // The person asks for a suggestion and takes it; then the agent plays on.
        await page.click("#suggest");
        await page.waitForFunction("document.querySelector('#action').value !== ''");
        await page.click("#act");
        await page.waitForSelector("#log .turn.you", { state: "attached" });
        const after = await page.getAttribute("body", "data-game");
        if (after === "playing") await page.click("#autoplay");
        await page.waitForSelector("body[data-game=solved], body[data-game=over], body[data-game=error]", {
          state: "attached",
          timeout: 180_000,
        });
        await screenshot(page, "play/solved");
        assert.equal(await page.getAttribute("body", "data-game"), "solved", await page.textContent("#status") ?? "");
        assert.match(await page.textContent("#status") ?? "", /^Solved in \d+ turns\.$/);
        assert.deepEqual(errors, [], "console errors");
        assert.deepEqual(foreign, [], "requests beyond the play server");

        // A task index out of range: the server's message in the page, and the page still usable.
        await page.fill("#task", "9999");
        await page.click("#new");
        await page.waitForSelector("body[data-game=error]", { state: "attached", timeout: 10_000 });
        assert.match(
          await page.textContent("#status") ?? "",
          /Task index 9999 is out of range: TextCraft has tasks 0 to 543\./,
        );
        assert.equal(await page.isDisabled("#new"), false);
        await screenshot(page, "play/out-of-range");
        await page.fill("#task", String(task));
        await page.click("#new");
        await page.waitForSelector("body[data-game=playing]", { state: "attached", timeout: 10_000 });
      });
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test("deno task play on a port already in use says so, naming the port", async () => {
  const dir = await saveTestModel(testModels()[0]);
  const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (held.addr as Deno.NetAddr).port;
    const r = await runDeno([...TASK_FLAGS, "play", "--model", dir, "--port", String(port)]);
    assert.equal(r.code, 2);
    assert.match(
      r.err,
      new RegExp(`^error: Port ${port} on 127\\.0\\.0\\.1 is already in use by another program; pick another`),
    );
  } finally {
    held.close();
  }
});
