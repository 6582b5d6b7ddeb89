// The key check shared by every server (src/env/server/access.ts keyIndex): the exact key matches, a prefix, an
// extension, another key or a missing header does not, and with several keys the one carried is named.
import assert from "node:assert/strict";
import { keyIndex } from "../../src/env/server/access.ts";

const req = (auth?: string) => new Request("http://x/", auth === undefined ? {} : { headers: { authorization: auth } });

Deno.test("keyIndex: only the exact Bearer key matches; several keys name the one carried", () => {
  const keys = ["0123456789abcdef0123", "fedcba9876543210fedc"];
  assert.equal(keyIndex(req("Bearer 0123456789abcdef0123"), keys), 0);
  assert.equal(keyIndex(req("bearer fedcba9876543210fedc"), keys), 1);
  for (const bad of ["Bearer 0123456789abcdef012", "Bearer 0123456789abcdef01234", "Bearer x", "Basic abc", ""]) {
    assert.equal(keyIndex(req(bad), keys), -1, bad);
  }
  assert.equal(keyIndex(req(), keys), -1);
  assert.equal(keyIndex(req("Bearer 0123456789abcdef0123"), []), -1);
});
