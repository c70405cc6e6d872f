// ts-notes: a small notebook served through every primitive of the TypeScript SDK.
// Tools (structured output, tool errors, progress, logs, configuration, questions
// to the client), a prompt, a resource and a resource template.

import {
  Plugin,
  ToolError,
  ToolResult,
  PromptError,
  ResourceError,
  ask,
  config,
  embeddedResource,
  log,
  progress,
  resourceLink,
  s,
  user,
} from "wharf-sdk";

interface Note {
  id: string;
  title: string;
  tags: string[];
  body: string;
}

const NOTES: Note[] = [
  { id: "groceries", title: "Groceries", tags: ["home"], body: "Milk, eggs, bread and coffee." },
  {
    id: "wharf-ideas",
    title: "Wharf ideas",
    tags: ["work", "wasm"],
    body: "Plugins in TypeScript and Python, with every MCP primitive.",
  },
  { id: "reading", title: "Reading list", tags: ["home", "books"], body: "The Rust book, then a book on WebAssembly." },
];

const noteUri = (id: string) => `notes://note/${id}`;
const find = (id: string) => NOTES.find((note) => note.id === id);
const markdown = (note: Note) => `# ${note.title}\n\n${note.body}\n\nTags: ${note.tags.join(", ")}\n`;

export const plugin = new Plugin();

plugin.tool({
  name: "search",
  title: "Search notes",
  description: "Finds the notes that mention the words of a query, best first.",
  input: s.object({
    query: s.string().describe("Words to look for in titles, bodies and tags."),
    limit: s.integer().min(1).max(20).default(5).describe("At most this many hits."),
  }),
  output: s.object({
    hits: s
      .array(
        s.object({
          id: s.string().describe("The note's id."),
          title: s.string().describe("The note's title."),
          score: s.integer().describe("How many of the query's words it mentions."),
        }),
      )
      .describe("The matching notes, best first."),
  }),
  annotations: { readOnly: true },
  run({ query, limit }) {
    const words = query.toLowerCase().split(/\s+/).filter((w) => w.length > 0);
    if (words.length === 0) return ToolResult.error("The query is empty: give at least one word.");
    const hits = NOTES.map((note) => {
      const text = `${note.title} ${note.body} ${note.tags.join(" ")}`.toLowerCase();
      return { id: note.id, title: note.title, score: words.filter((w) => text.includes(w)).length };
    })
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
    return { hits };
  },
});

plugin.tool({
  name: "get",
  description: "Shows one note, with a link to it as a resource.",
  input: s.object({ id: s.string().describe("The note's id, such as `groceries`.") }),
  annotations: { readOnly: true },
  run({ id }) {
    const note = find(id);
    if (!note) return ToolResult.error(`No note with id "${id}".`);
    return ToolResult.text(markdown(note)).with(
      resourceLink({ uri: noteUri(id), name: id, title: note.title, mimeType: "text/markdown" }),
    );
  },
});

plugin.tool({
  name: "reindex",
  description: "Rebuilds the notebook's index, reporting progress note by note.",
  annotations: { idempotent: true },
  run() {
    if (config("index") === "off") throw ToolError.failed("indexing is turned off (configuration `index`)");
    NOTES.forEach((note, i) => {
      progress(i + 1, NOTES.length, `indexed ${note.id}`);
      log.info(`indexed ${note.id}`);
    });
    return `Indexed ${NOTES.length} notes in ${config("notebook") ?? "Notes"}.`;
  },
});

plugin.tool({
  name: "draft",
  description: "Drafts a new note: asks the user for a title and a tag, then the client's model for the text.",
  input: s.object({ topic: s.string().describe("What the note is about.") }),
  run({ topic }) {
    const details = ask.elicit(
      "details",
      `A note about ${topic}: its title and tag?`,
      s.object({
        title: s.string().describe("The note's title."),
        tag: s.enum(["home", "work", "books"]).describe("Where the note belongs."),
      }),
    );
    if (details.action === "decline") return "Draft declined.";
    if (details.action === "cancel") return "Draft cancelled.";
    const { title, tag } = details.content;
    const body = ask.sampleText("body", `Write a two-sentence note titled "${title}" about ${topic}.`, 200);
    return `# ${title} [${tag}]\n\n${body}`;
  },
});

plugin.tool({
  name: "roots",
  description: "Lists the folders the client shares (its roots).",
  annotations: { readOnly: true },
  run() {
    const roots = ask.listRoots("roots");
    if (roots.length === 0) return "No roots.";
    return roots.map((root) => (root.name ? `${root.name}: ${root.uri}` : root.uri)).join("\n");
  },
});

plugin.prompt({
  name: "review",
  title: "Review a note",
  description: "Asks the model to review one note.",
  arguments: {
    id: { description: "The note to review.", required: true, complete: NOTES.map((note) => note.id) },
    focus: { description: "What to pay attention to (optional)." },
  },
  render({ id, focus }) {
    const note = find(id);
    if (!note) throw PromptError.invalidArguments(`no note with id "${id}"`);
    return {
      description: `Review of ${note.title}`,
      messages: [
        user(embeddedResource({ uri: noteUri(id), mimeType: "text/markdown", text: markdown(note) })),
        user(`Review the note above${focus ? `, focusing on ${focus}` : ""}.`),
      ],
    };
  },
});

plugin.resource({
  uri: "notes://index",
  name: "index",
  title: "All notes",
  description: "The list of notes, with links.",
  mimeType: "text/markdown",
  read: () => `# Notes\n\n${NOTES.map((note) => `- [${note.title}](${noteUri(note.id)})\n`).join("")}`,
});

plugin.resourceTemplate({
  uriTemplate: "notes://note/{id}",
  name: "note",
  title: "A note",
  description: "One note, as Markdown.",
  mimeType: "text/markdown",
  complete: { id: NOTES.map((note) => note.id) },
  read({ id }, uri) {
    const note = find(id);
    if (!note) throw ResourceError.notFound(uri);
    return markdown(note);
  },
});

export const { tools, prompts, resources } = plugin.exports();
