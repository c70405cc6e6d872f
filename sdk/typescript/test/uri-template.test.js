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

test("values decode as in the Rust SDK: reserved triplets stay encoded in {+var}", () => {
  assert.deepEqual(matchTemplate("files:///{+path}", "files:///a%2Fb%20c"), { path: "a%2Fb c" });
  assert.deepEqual(matchTemplate("files:///{+path}", "files:///x%23y%3Fz"), { path: "x%23y%3Fz" });
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/a%2Fb"), { id: "a/b" });
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/caf%C3%A9"), { id: "café" });
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/caf%c3%a9"), { id: "café" });
  // Not UTF-8 once decoded: the text as it came.
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/a%FFb"), { id: "a%FFb" });
  // A `%` without two hex digits is text.
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/100%"), { id: "100%" });
  assert.deepEqual(matchTemplate("notes://note/{id}", "notes://note/%zz%41"), { id: "%zzA" });
  assert.deepEqual(matchTemplate("files:///{+path}", "files:///é/%41"), { path: "é/A" });
});
