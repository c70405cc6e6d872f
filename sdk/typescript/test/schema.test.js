// Unit tests of the schema builder: the JSON Schema each builder call gives, and the
// exact message of each value that does not fit.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ValidationError, s } from "../src/schema.js";

test("scalars carry their JSON Schema and modifiers", () => {
  assert.deepEqual(s.string().describe("A name.").minLength(1).maxLength(5).toJSON(), {
    type: "string",
    description: "A name.",
    minLength: 1,
    maxLength: 5,
  });
  assert.deepEqual(s.integer().min(1).max(20).default(5).toJSON(), {
    type: "integer",
    minimum: 1,
    maximum: 20,
    default: 5,
  });
  assert.deepEqual(s.number().nullable().toJSON(), { type: ["number", "null"] });
  assert.deepEqual(s.enum(["a", "b"]).title("Pick").toJSON(), { type: "string", enum: ["a", "b"], title: "Pick" });
  assert.deepEqual(s.literal(3).toJSON(), { const: 3 });
  assert.deepEqual(s.string().format("date").pattern(/^\d+$/).toJSON(), {
    type: "string",
    format: "date",
    pattern: "^\\d+$",
  });
});

test("objects list required fields; optional and defaulted ones are not required", () => {
  const schema = s.object({
    query: s.string(),
    limit: s.integer().default(5),
    tags: s.array(s.string()).optional().describe("Tags."),
  });
  assert.deepEqual(schema.toJSON(), {
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "integer", default: 5 },
      tags: { type: "array", items: { type: "string" }, description: "Tags." },
    },
    required: ["query"],
  });
  assert.deepEqual(s.object({}).toJSON(), { type: "object", properties: {} });
});

test("nested, record, union and nullable objects", () => {
  assert.deepEqual(s.record(s.number()).toJSON(), { type: "object", additionalProperties: { type: "number" } });
  assert.deepEqual(s.union(s.string(), s.integer()).toJSON(), { anyOf: [{ type: "string" }, { type: "integer" }] });
  assert.deepEqual(s.object({ a: s.boolean() }).nullable().describe("Maybe.").toJSON(), {
    type: ["object", "null"],
    properties: { a: { type: "boolean" } },
    required: ["a"],
    description: "Maybe.",
  });
  assert.deepEqual(s.union(s.string(), s.integer()).nullable().describe("Either.").toJSON(), {
    anyOf: [{ anyOf: [{ type: "string" }, { type: "integer" }] }, { type: "null" }],
    description: "Either.",
  });
});

test("parsing fills defaults, drops unknown keys and keeps absent optionals absent", () => {
  const schema = s.object({ q: s.string(), n: s.integer().default(5), t: s.array(s.string()).optional() });
  assert.deepEqual(schema.parse({ q: "x", extra: 1 }), { q: "x", n: 5 });
  assert.deepEqual(schema.parse({ q: "x", n: 2, t: ["a"] }), { q: "x", n: 2, t: ["a"] });
  assert.equal(s.string().nullable().parse(null), null);
  assert.equal(s.union(s.string(), s.integer()).parse(4), 4);
});

function rejects(schema, value, message) {
  assert.throws(
    () => schema.parse(value),
    (error) => error instanceof ValidationError && error.message === message,
  );
}

test("every mismatch names the field and what was expected", () => {
  const schema = s.object({
    name: s.string().minLength(2).maxLength(4).pattern("^[a-z]+$"),
    n: s.integer().min(1).max(3),
    x: s.number().optional(),
    on: s.boolean().optional(),
    kind: s.enum(["a", "b"]).optional(),
    list: s.array(s.object({ v: s.literal("k") })).maxItems(1).optional(),
  });
  rejects(schema, [], "expected an object, got an array");
  rejects(schema, { n: 1 }, "`name`: missing required field");
  rejects(schema, { name: 7, n: 1 }, "`name`: expected a string, got the number 7");
  rejects(schema, { name: "a", n: 1 }, "`name`: must be at least 2 characters long");
  rejects(schema, { name: "abcde", n: 1 }, "`name`: must be at most 4 characters long");
  rejects(schema, { name: "AB", n: 1 }, "`name`: must match the pattern ^[a-z]+$");
  rejects(schema, { name: "ab", n: 1.5 }, "`n`: expected an integer, got the number 1.5");
  rejects(schema, { name: "ab", n: 0 }, "`n`: must be at least 1");
  rejects(schema, { name: "ab", n: 4 }, "`n`: must be at most 3");
  rejects(schema, { name: "ab", n: "1" }, '`n`: expected a number, got the string "1"');
  rejects(schema, { name: "ab", n: 1, x: null }, "`x`: expected a number, got null");
  rejects(schema, { name: "ab", n: 1, on: "yes" }, '`on`: expected true or false, got the string "yes"');
  rejects(schema, { name: "ab", n: 1, kind: "c" }, '`kind`: expected one of "a", "b", got the string "c"');
  rejects(schema, { name: "ab", n: 1, list: [{ v: "k" }, { v: "k" }] }, "`list`: must have at most 1 items");
  rejects(schema, { name: "ab", n: 1, list: [{ v: "j" }] }, '`list[0].v`: expected "k", got the string "j"');
  rejects(s.record(s.integer()), { a: 1, b: "2" }, '`b`: expected a number, got the string "2"');
  rejects(
    s.union(s.string(), s.boolean()),
    3,
    "fits none of the alternatives (expected a string, got the number 3; expected true or false, got the number 3)",
  );
});
