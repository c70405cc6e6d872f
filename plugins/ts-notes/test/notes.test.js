// The plugin's own tests, under Node.js with the SDK's stand-in host:
// `npm test` (tsc, then node --import wharf-sdk/testing --test test/).
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { testHost } from "wharf-sdk/testing/host";
import { plugin } from "../dist/index.js";

beforeEach(() => testHost.reset());

test("search returns structured hits, best first", () => {
  const result = plugin.callTool("search", { query: "book home", limit: 2 });
  assert.deepEqual(result.structuredContent, {
    hits: [
      { id: "reading", title: "Reading list", score: 2 },
      { id: "groceries", title: "Groceries", score: 1 },
    ],
  });
  assert.equal(plugin.callTool("search", { query: "  " }).isError, true);
  assert.throws(() => plugin.callTool("search", { query: "x", limit: 0 }), { message: "`limit`: must be at least 1" });
});

test("reindex reports progress and logs, and honours its configuration", () => {
  testHost.config = { notebook: "Work" };
  assert.deepEqual(plugin.callTool("reindex").content, [{ type: "text", text: "Indexed 3 notes in Work." }]);
  assert.equal(testHost.progress.length, 3);
  assert.deepEqual(testHost.logs[0], { level: "info", message: "indexed groceries" });
  testHost.config = { index: "off" };
  assert.throws(() => plugin.callTool("reindex"), { message: "indexing is turned off (configuration `index`)" });
});

test("draft asks for details, then the client's model", () => {
  const { tools } = plugin.exports();
  tools.callTool("draft", '{"topic":"tea"}');
  assert.deepEqual(Object.keys(testHost.asked), ["details"]);
  testHost.answers.details = { action: "accept", content: { title: "Tea", tag: "home" } };
  testHost.answers.body = { role: "assistant", content: { type: "text", text: "Green tea." }, model: "m" };
  assert.deepEqual(plugin.callTool("draft", { topic: "tea" }).content, [{ type: "text", text: "# Tea [home]\n\nGreen tea." }]);
});

test("the prompt, the resource and the template", () => {
  assert.equal(plugin.getPrompt("review", { id: "groceries" }).messages.length, 2);
  assert.deepEqual(plugin.completePromptArgument("review", "id", "g"), ["groceries"]);
  assert.match(plugin.readResource("notes://index")[0].text, /\[Groceries\]\(notes:\/\/note\/groceries\)/);
  assert.throws(() => plugin.readResource("notes://note/nope"), { message: "notes://note/nope" });
});
