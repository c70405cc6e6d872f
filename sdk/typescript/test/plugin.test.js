// Unit tests of the plugin's dispatch and of the WIT-facing exports, under Node.js
// with the stand-in host (run with `node --import ./src/testing/register.js`).
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { InputPending, Plugin, PromptError, ResourceError, ToolError, ToolResult, ask, log, progress, s, user } from "../src/index.js";
import { testHost } from "../src/testing/host.js";

beforeEach(() => testHost.reset());

function plugin() {
  return new Plugin()
    .tool({
      name: "divide",
      description: "Divides a by b.",
      input: s.object({ a: s.number().describe("The dividend."), b: s.number() }),
      output: s.object({ result: s.number() }),
      annotations: { readOnly: true },
      run: ({ a, b }) => (b === 0 ? ToolResult.error("cannot divide by zero") : { result: a / b }),
    })
    .tool({ name: "boom", run: () => { throw new Error("it broke"); } })
    .tool({ name: "bad-output", output: s.object({ n: s.integer() }), run: () => ({ n: "x" }) })
    .tool({
      name: "ask-two",
      run() {
        const [a, b] = ask.together(
          () => ask.elicit("a", "A?", s.object({ x: s.string() })),
          () => ask.elicit("b", "B?", s.object({ y: s.integer() })),
        );
        log.info("asked");
        progress(1, 2);
        return `${a.action}:${a.content?.x} ${b.action}`;
      },
    })
    .prompt({
      name: "hello",
      arguments: { who: { required: true, complete: ["ada", "bob", "al"] }, tone: {} },
      render: ({ who, tone }) => [user(`Hello ${who}${tone ? ` (${tone})` : ""}`)],
    })
    .resource({ uri: "x://a", name: "a", mimeType: "text/plain", size: 3, read: () => "abc" })
    .resourceTemplate({
      uriTemplate: "x://item/{id}",
      name: "item",
      complete: { id: (value) => ["one", "two"].filter((v) => v.startsWith(value)) },
      read: ({ id }, uri) => {
        if (id === "none") throw ResourceError.notFound(uri);
        return new Uint8Array([1, 2]);
      },
    });
}

test("tools are listed with their schemas and annotations", () => {
  const [divide, boom] = plugin().listTools();
  assert.deepEqual(divide, {
    name: "divide",
    title: undefined,
    description: "Divides a by b.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number", description: "The dividend." }, b: { type: "number" } },
      required: ["a", "b"],
    },
    outputSchema: { type: "object", properties: { result: { type: "number" } }, required: ["result"] },
    annotations: { title: undefined, readOnlyHint: true, destructiveHint: undefined, idempotentHint: undefined, openWorldHint: undefined },
  });
  assert.deepEqual(boom.inputSchema, { type: "object", properties: {} });
});

test("structured output, is-error results and every tool error", () => {
  const p = plugin();
  assert.deepEqual(p.callTool("divide", '{"a":1,"b":4}'), new ToolResult([{ type: "text", text: '{"result":0.25}' }], { result: 0.25 }));
  assert.equal(p.callTool("divide", { a: 1, b: 0 }).isError, true);
  const error = (fn) => {
    try {
      fn();
    } catch (e) {
      return [e.constructor.name, e.kind, e.message];
    }
    assert.fail("no error");
  };
  assert.deepEqual(error(() => p.callTool("nope")), ["ToolError", "unknown-tool", "nope"]);
  assert.deepEqual(error(() => p.callTool("divide", { a: 1 })), ["ToolError", "invalid-arguments", "`b`: missing required field"]);
  assert.deepEqual(error(() => p.callTool("divide", "{")), ["ToolError", "invalid-arguments", "the arguments are not valid JSON"]);
  assert.deepEqual(error(() => p.callTool("bad-output")), [
    "ToolError",
    "failed",
    "the output does not fit the tool's output schema: `n`: expected a number, got the string \"x\"",
  ]);
});

test("the WIT exports turn thrown errors and pending questions into WIT values", () => {
  const { tools } = plugin().exports();
  assert.deepEqual(tools.callTool("divide", '{"a":3,"b":1}'), {
    content: [{ tag: "text", val: '{"result":3}' }],
    structuredContent: '{"result":3}',
    isError: false,
  });
  assert.throws(() => tools.callTool("boom", "{}"), (e) => e instanceof ToolError && e.payload.tag === "failed" && e.payload.val === "it broke");
  // Both questions go out in the same round; the call ends early.
  assert.deepEqual(tools.callTool("ask-two", "{}"), { content: [], structuredContent: undefined, isError: false });
  assert.deepEqual(Object.keys(testHost.asked), ["a", "b"]);
  assert.deepEqual(testHost.asked.a, {
    tag: "elicit-form",
    val: { message: "A?", requestedSchema: '{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}' },
  });
  testHost.answers = { a: { action: "accept", content: { x: "hi" } }, b: { action: "decline" } };
  assert.deepEqual(tools.callTool("ask-two", "{}").content, [{ tag: "text", val: "accept:hi decline" }]);
  assert.deepEqual(testHost.logs, [{ level: "info", message: "asked" }]);
  assert.deepEqual(testHost.progress, [{ progress: 1, total: 2, message: undefined }]);
  testHost.answers = { a: "unsupported" };
  assert.throws(
    () => tools.callTool("ask-two", "{}"),
    (e) => e.payload.tag === "failed" && e.payload.val === "the client cannot answer `a`: it lacks the capability",
  );
  // A bad answer is the client's fault: named precisely.
  testHost.answers = { a: { action: "accept", content: { x: 1 } }, b: { action: "cancel" } };
  assert.throws(() => tools.callTool("ask-two", "{}"), (e) => e.payload.val === "`x`: expected a string, got the number 1");
  assert.ok(new InputPending("k") instanceof Error);
});

test("prompts render, check required arguments and complete", () => {
  const p = plugin();
  assert.deepEqual(p.listPrompts()[0].arguments.map((a) => [a.name, a.required]), [["who", true], ["tone", false]]);
  assert.deepEqual(p.getPrompt("hello", { who: "ada", extra: "x" }), {
    messages: [{ role: "user", content: { type: "text", text: "Hello ada" } }],
  });
  assert.deepEqual(p.completePromptArgument("hello", "who", "a"), ["ada", "al"]);
  assert.deepEqual(p.completePromptArgument("hello", "nope", "a"), []);
  const { prompts } = p.exports();
  assert.deepEqual(prompts.getPrompt("hello", [["who", "bob"], ["tone", "warm"]]), {
    description: undefined,
    messages: [{ role: "user", content: { tag: "text", val: "Hello bob (warm)" } }],
  });
  assert.throws(() => prompts.getPrompt("hello", []), (e) => e instanceof PromptError && e.payload.tag === "invalid-arguments" && e.payload.val === "missing required argument `who`");
  assert.throws(() => prompts.getPrompt("nope", []), (e) => e.payload.tag === "unknown-prompt" && e.payload.val === "nope");
});

test("resources and templates read, complete and fail with not-found", () => {
  const p = plugin();
  assert.deepEqual(p.listResources(), [{ uri: "x://a", name: "a", mimeType: "text/plain", size: 3 }]);
  assert.deepEqual(p.listResourceTemplates(), [{ uriTemplate: "x://item/{id}", name: "item" }]);
  const { resources } = p.exports();
  assert.deepEqual(resources.listResources()[0].size, 3n);
  assert.deepEqual(resources.readResource("x://a"), [{ uri: "x://a", mimeType: "text/plain", body: { tag: "text", val: "abc" } }]);
  assert.deepEqual(resources.readResource("x://item/one"), [{ uri: "x://item/one", mimeType: undefined, body: { tag: "blob", val: new Uint8Array([1, 2]) } }]);
  assert.throws(() => resources.readResource("x://item/none"), (e) => e.payload.tag === "not-found" && e.payload.val === "x://item/none");
  assert.throws(() => resources.readResource("y://z"), (e) => e.payload.tag === "not-found" && e.payload.val === "y://z");
  assert.deepEqual(resources.completeTemplate("x://item/{id}", "id", "t", []), ["two"]);
  assert.deepEqual(resources.completeTemplate("x://item/{id}", "nope", "", []), []);
});

test("names are checked when declared", () => {
  assert.throws(() => new Plugin().tool({ name: "a b", run: () => "" }), {
    message: 'tool name "a b" must be 1 to 64 characters of A-Z a-z 0-9 _ - .',
  });
  assert.throws(() => new Plugin().tool({ name: "a", run: () => "" }).tool({ name: "a", run: () => "" }), {
    message: 'two tools are named "a"',
  });
});
