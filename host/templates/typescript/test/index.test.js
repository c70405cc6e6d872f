// Tests of the plugin under Node.js (`npm test`): the SDK's stand-in host replaces
// Wharf, and plugin.callTool returns what a client would get.
import assert from "node:assert/strict";
import { test } from "node:test";

import { plugin } from "../dist/index.js";

test("greet greets", () => {
  assert.deepEqual(plugin.callTool("greet", { name: "Ada", excited: true }).content, [
    { type: "text", text: "Hello, Ada!" },
  ]);
});

test("an empty name is an error the model can fix", () => {
  assert.equal(plugin.callTool("greet", { name: " " }).isError, true);
});

test("the input schema comes from the s.object", () => {
  const [greet] = plugin.listTools();
  assert.deepEqual(greet.inputSchema.required, ["name"]);
});
