import assert from "node:assert/strict";
import { test } from "node:test";

import { matchTemplate, variablesOf } from "../src/uri-template.js";

test("templates match segments, reserved expansions and decode", () => {
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/a%20b"), { id: "a b" });
  assert.equal(matchTemplate("notes://note/{id}", "notes://note/a/b"), undefined);
  assert.equal(matchTemplate("notes://note/{id}", "notes://other/a"), undefined);
  assert.deepEqual(matchTemplate("files:///{+path}", "files:///a/b.txt"), { path: "a/b.txt" });
  assert.deepEqual(matchTemplate("x://{a}.{b}", "x://one.two"), { a: "one", b: "two" });
  assert.deepEqual(variablesOf("x://{a}/{+b}"), ["a", "b"]);
});
