// Type-level tests of the schema inference: `tsc -p test` (run by `cargo xtask
// examples` with the ts-notes example's tsc) fails if an inferred type is wrong or
// a `@ts-expect-error` line stops being an error.
import { Plugin, ask, s, user, type Infer } from "../src/index.js";

const input = s.object({
  q: s.string(),
  n: s.integer().default(3),
  tags: s.array(s.enum(["a", "b"])).optional(),
  z: s.string().nullable(),
  nested: s.object({ on: s.boolean() }).optional(),
  either: s.union(s.literal(1), s.literal("x")).optional(),
  map: s.record(s.number()).optional(),
});
type In = Infer<typeof input>;

const ok: In = { q: "a", n: 1, z: null, nested: { on: true }, either: "x", map: { k: 1 } };
// @ts-expect-error q is a string
const wrongType: In = { q: 1, n: 1, z: null };
// @ts-expect-error z is required (nullable, not optional)
const missing: In = { q: "a", n: 1 };
// @ts-expect-error tags hold "a" | "b"
const wrongEnum: In = { q: "a", n: 1, z: null, tags: ["c"] };

const plugin = new Plugin();
plugin.tool({
  name: "typed",
  input,
  output: s.object({ r: s.number() }),
  run(args) {
    const n: number = args.n;
    const tags: ("a" | "b")[] | undefined = args.tags;
    const either: 1 | "x" | undefined = args.either;
    return { r: n + (tags?.length ?? 0) + (either === 1 ? 1 : 0) };
  },
});
// @ts-expect-error the output must fit its schema
plugin.tool({ name: "bad-output", output: s.object({ r: s.number() }), run: () => ({ r: "x" }) });
plugin.tool({ name: "plain", run: () => "text" });
plugin.prompt({
  name: "p",
  arguments: { a: { required: true }, b: {} },
  render({ a, b }) {
    const first: string = a;
    // @ts-expect-error b is optional
    const second: string = b;
    return [user(first + second)];
  },
});
const answer = ask.elicit("k", "m", s.object({ title: s.string() }));
if (answer.action === "accept") {
  const title: string = answer.content.title;
  void title;
}
void [ok, wrongType, missing, wrongEnum];
