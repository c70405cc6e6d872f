// The `{{name}}` Wharf plugin. `wharf build` runs `jco componentize` on this file
// against the `tool-plugin` world of wit/plugin.wit: the exported object `tools`
// is the `wharf:plugin/tools` interface (camelCase here, kebab-case in WIT).

/** The greeting for `name`. */
export function greeting(name) {
  return `Hello, ${name}!`;
}

/** Each tool: what Wharf lists (name, description, JSON Schema of the
 * arguments) and the function it calls with the parsed arguments. */
const TOOLS = [
  {
    name: "greet",
    title: "Greet",
    /** Greets someone by name. */
    description: "Greets someone by name.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "Who to greet." } },
      required: ["name"],
    },
    run: ({ name }) => {
      if (typeof name !== "string" || name.trim() === "") {
        return { text: "`name` must be a non-empty string", isError: true };
      }
      return { text: greeting(name) };
    },
  },
];

export const tools = {
  /** wharf:plugin/tools.list-tools */
  listTools() {
    return TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: JSON.stringify(tool.inputSchema),
      outputSchema: undefined,
      annotations: { readOnlyHint: true },
    }));
  },

  /** wharf:plugin/tools.call-tool: a thrown `{ tag, val }` is the WIT
   * `tool-error` (unknown-tool, invalid-arguments, failed). */
  callTool(name, argumentsJson) {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) {
      throw { tag: "unknown-tool", val: name };
    }
    const { text, isError = false } = tool.run(JSON.parse(argumentsJson));
    return {
      content: [{ tag: "text", val: text }],
      structuredContent: undefined,
      isError,
    };
  },
};
