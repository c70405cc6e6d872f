// Calls the built component through Wharf, the way a client would reach it.
// Run `wharf build` first; set WHARF to the wharf binary if it is not on PATH.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const wharf = process.env.WHARF ?? "wharf";
const component = "{{name}}.wasm";

test("greet says hello through Wharf", () => {
  assert.ok(existsSync(component), `${component} is missing: run \`wharf build\` first`);
  const out = execFileSync(wharf, ["call", component, "greet", "--args", '{"name":"Ada"}'], {
    encoding: "utf8",
  });
  assert.equal(out.trim(), "Hello, Ada!");
});
