// The studio page's node:crypto stand-in digests as Node's does (the rollout's state anchors run in the page), and
// names what it lacks.
import assert from "node:assert/strict";
import { createHash as nodeHash } from "node:crypto";
import { createHash } from "../../src/studio/node_crypto.ts";

Deno.test("the page's sha256 is Node's, for text, bytes and chained updates; other algorithms are named", () => {
  const bytes = new Uint8Array(300).map((_, i) => (i * 37) & 255);
  for (const parts of [[""], ["abc"], ["Got 1 oak logs", "\nstate ", "é€😀"], [bytes, "tail"]]) {
    const page = createHash("sha256"), node = nodeHash("sha256");
    for (const p of parts) {
      page.update(p);
      node.update(p);
    }
    assert.equal(page.digest("hex"), node.digest("hex"));
  }
  assert.throws(() => createHash("md5"), /createHash\("md5"\) is not available in the studio page/);
});
