// The `{{name}}` Wharf plugin. `wharf build` compiles this file with tsc to
// dist/index.js and runs `jco componentize` on it against the `tool-plugin`
// world of wit/plugin.wit: the exported object `tools` is the
// `wharf:plugin/tools` interface (camelCase here, kebab-case in WIT).

/** The WIT `tool` record, as jco passes it. */
interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: string;
  outputSchema?: string;
  annotations?: { readOnlyHint?: boolean };
}

/** The WIT `call-result` record. */
interface CallResult {
  content: { tag: "text"; val: string }[];
  structuredContent?: string;
  isError: boolean;
}

/** What a tool's function returns: text, and whether it is an error the
 * model may correct. */
interface Outcome {
  text: string;
  isError?: boolean;
}

/** One tool: what Wharf lists and the function it calls. */
interface ToolDefinition<A> {
  name: string;
  title: string;
  description: string;
  /** The JSON Schema of `A`. */
  inputSchema: object;
  run: (args: A) => Outcome;
}

/** The greeting for `name`. */
export function greeting(name: string): string {
  return `Hello, ${name}!`;
}

/** Arguments of `greet`. */
interface GreetArgs {
  /** Who to greet. */
  name: string;
}

/** Greets someone by name. */
const greet: ToolDefinition<GreetArgs> = {
  name: "greet",
  title: "Greet",
  description: "Greets someone by name.",
  inputSchema: {
    type: "object",
    properties: { name: { type: "string", description: "Who to greet." } },
    required: ["name"],
  },
  run: ({ name }) => {
    if (name.trim() === "") {
      return { text: "`name` must not be empty", isError: true };
    }
    return { text: greeting(name) };
  },
};

const TOOLS: ToolDefinition<any>[] = [greet];

export const tools = {
  /** wharf:plugin/tools.list-tools */
  listTools(): ToolInfo[] {
    return TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: JSON.stringify(tool.inputSchema),
      annotations: { readOnlyHint: true },
    }));
  },

  /** wharf:plugin/tools.call-tool: a thrown `{ tag, val }` is the WIT
   * `tool-error` (unknown-tool, invalid-arguments, failed). */
  callTool(name: string, argumentsJson: string): CallResult {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) {
      throw { tag: "unknown-tool", val: name };
    }
    const { text, isError = false } = tool.run(JSON.parse(argumentsJson));
    return { content: [{ tag: "text", val: text }], isError };
  },
};
