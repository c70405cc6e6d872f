// The plugin: its tools, prompts and resources, dispatch by name or URI, and the
// objects that implement the WIT `tools`, `prompts` and `resources` interfaces
// (`plugin.exports()`, exported by the plugin's entry module for jco). Every call
// is a fresh instance, so registration runs once per call: keep it to declaring.

import { ToolResult, text } from "./content.js";
import {
  InputFailed,
  InputPending,
  InputUnsupported,
  PromptError,
  ResourceError,
  ToolError,
} from "./errors.js";
import { ValidationError, s } from "./schema.js";
import { matchTemplate, variablesOf } from "./uri-template.js";

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function checkName(kind, name, taken) {
  if (!NAME.test(name)) {
    throw new Error(`${kind} name ${JSON.stringify(name)} must be 1 to 64 characters of A-Z a-z 0-9 _ - .`);
  }
  if (taken.has(name)) throw new Error(`two ${kind}s are named ${JSON.stringify(name)}`);
}

function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof ToolResult);
}

/** Suggestions from `complete` (a list filtered by prefix, or a function). */
function suggestions(complete, value, context) {
  if (!complete) return [];
  const list = typeof complete === "function" ? complete(value, context) : complete.filter((c) => c.startsWith(value));
  return list.slice(0, 100).map(String);
}

function annotationsOf(tool) {
  const a = tool.annotations ?? {};
  const out = {
    title: a.title,
    readOnlyHint: a.readOnly,
    destructiveHint: a.destructive,
    idempotentHint: a.idempotent,
    openWorldHint: a.openWorld,
  };
  return Object.values(out).some((v) => v !== undefined) ? out : undefined;
}

/** Contents of a resource read from what a `read` function returned. */
function contentsOf(uri, mimeType, value) {
  const one = (item) => {
    if (typeof item === "string") return { uri, mimeType, text: item };
    if (item instanceof Uint8Array) return { uri, mimeType, blob: item };
    return { uri, mimeType, ...item };
  };
  return Array.isArray(value) ? value.map(one) : [one(value)];
}

export class Plugin {
  constructor() {
    this._tools = new Map();
    this._prompts = new Map();
    this._resources = new Map();
    this._templates = new Map();
  }

  /**
   * A tool: `{ name, title?, description, input: s.object(...), output?: s.object(...),
   * annotations?, run(args) }`. With `output`, `run` returns an object of that schema
   * (structured output) or a `ToolResult`; without, a string, a `ToolResult` or contents.
   */
  tool(definition) {
    checkName("tool", definition.name, this._tools);
    this._tools.set(definition.name, { input: s.object({}), ...definition });
    return this;
  }

  /**
   * A prompt: `{ name, title?, description, arguments?: { NAME: { description?,
   * required?, complete? } }, render(args) }` returning messages (`user(...)`,
   * `assistant(...)`), a string (one user message) or `{ description?, messages }`.
   */
  prompt(definition) {
    checkName("prompt", definition.name, this._prompts);
    this._prompts.set(definition.name, { arguments: {}, ...definition });
    return this;
  }

  /**
   * A resource at a fixed URI: `{ uri, name, title?, description?, mimeType?, size?,
   * pollMs?, read() }` returning text, bytes or contents.
   */
  resource(definition) {
    if (this._resources.has(definition.uri)) throw new Error(`two resources have the URI ${definition.uri}`);
    this._resources.set(definition.uri, definition);
    return this;
  }

  /**
   * Resources described by an RFC 6570 template: `{ uriTemplate, name, title?,
   * description?, mimeType?, complete?: { VAR: ... }, read(vars, uri) }`.
   */
  resourceTemplate(definition) {
    if (this._templates.has(definition.uriTemplate)) {
      throw new Error(`two resource templates are ${definition.uriTemplate}`);
    }
    this._templates.set(definition.uriTemplate, definition);
    return this;
  }

  // ---- Native API: what Wharf would get, in MCP's JSON shape (for tests). ----

  /** The tools as `tools/list` shows them (before Wharf prefixes the names). */
  listTools() {
    return [...this._tools.values()].map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input.toJSON(),
      outputSchema: tool.output?.toJSON(),
      annotations: annotationsOf(tool),
    }));
  }

  /** Runs tool `name`; returns its `ToolResult` or throws a `ToolError`. */
  callTool(name, args = {}) {
    const tool = this._tools.get(name);
    if (!tool) throw new ToolError("unknown-tool", name);
    let value = args;
    if (typeof args === "string") {
      try {
        value = JSON.parse(args);
      } catch {
        throw ToolError.invalidArguments("the arguments are not valid JSON");
      }
    }
    let parsed;
    try {
      parsed = tool.input.parse(value);
    } catch (error) {
      if (error instanceof ValidationError) throw ToolError.invalidArguments(error.message);
      throw error;
    }
    const output = tool.run(parsed);
    return this._result(tool, output);
  }

  _result(tool, value) {
    if (value instanceof ToolResult) return value;
    if (tool.output) {
      let checked;
      try {
        checked = tool.output.parse(value);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        throw ToolError.failed(`the output does not fit the tool's output schema: ${error.message}`);
      }
      return ToolResult.structured(checked);
    }
    if (Array.isArray(value)) return ToolResult.of(...value);
    if (isPlainObject(value) && typeof value.type === "string") return ToolResult.of(value);
    return ToolResult.text(value ?? "");
  }

  /** The prompts as `prompts/list` shows them. */
  listPrompts() {
    return [...this._prompts.values()].map((prompt) => ({
      name: prompt.name,
      title: prompt.title,
      description: prompt.description,
      arguments: Object.entries(prompt.arguments).map(([name, arg]) => ({
        name,
        title: arg.title,
        description: arg.description,
        required: arg.required ?? false,
      })),
    }));
  }

  /** Renders prompt `name` with `args` (an object of strings): `{ description?, messages }`. */
  getPrompt(name, args = {}) {
    const prompt = this._prompts.get(name);
    if (!prompt) throw new PromptError("unknown-prompt", name);
    for (const [argName, arg] of Object.entries(prompt.arguments)) {
      if (arg.required && args[argName] === undefined) {
        throw PromptError.invalidArguments(`missing required argument \`${argName}\``);
      }
    }
    const known = {};
    for (const argName of Object.keys(prompt.arguments)) {
      if (args[argName] !== undefined) known[argName] = args[argName];
    }
    const rendered = prompt.render(known);
    if (typeof rendered === "string") return { messages: [{ role: "user", content: text(rendered) }] };
    if (Array.isArray(rendered)) return { messages: rendered };
    return rendered;
  }

  /** Suggestions for argument `argument` of prompt `name`. */
  completePromptArgument(name, argument, value, context = {}) {
    const arg = this._prompts.get(name)?.arguments[argument];
    return suggestions(arg?.complete, value, context);
  }

  /** The resources as `resources/list` shows them (before Wharf prefixes the URIs). */
  listResources() {
    return [...this._resources.values()].map(({ read, ...resource }) => resource);
  }

  /** The resource templates. */
  listResourceTemplates() {
    return [...this._templates.values()].map(({ read, complete, ...template }) => template);
  }

  /** Reads `uri`: `[{ uri, mimeType?, text | blob }]`; throws a `ResourceError`. */
  readResource(uri) {
    const resource = this._resources.get(uri);
    if (resource) return contentsOf(uri, resource.mimeType, resource.read());
    for (const template of this._templates.values()) {
      const vars = matchTemplate(template.uriTemplate, uri);
      if (vars) return contentsOf(uri, template.mimeType, template.read(vars, uri));
    }
    throw ResourceError.notFound(uri);
  }

  /** Suggestions for variable `variable` of template `uriTemplate`. */
  completeTemplateVariable(uriTemplate, variable, value, context = {}) {
    const template = this._templates.get(uriTemplate);
    if (!template || !variablesOf(uriTemplate).includes(variable)) return [];
    return suggestions(template.complete?.[variable], value, context);
  }

  /**
   * The implementations of the WIT interfaces, to export from the entry module:
   * `export const { tools, prompts, resources } = plugin.exports();`
   */
  exports() {
    return {
      tools: {
        listTools: () =>
          this.listTools().map((tool) => ({
            name: tool.name,
            title: tool.title,
            description: tool.description,
            inputSchema: JSON.stringify(tool.inputSchema),
            outputSchema: tool.outputSchema && JSON.stringify(tool.outputSchema),
            annotations: tool.annotations,
          })),
        callTool: (name, args) =>
          guard(
            () => callResultToWit(this.callTool(name, args)),
            () => ({ content: [], structuredContent: undefined, isError: false }),
            (message) => ToolError.failed(message),
          ),
      },
      prompts: {
        listPrompts: () => this.listPrompts(),
        getPrompt: (name, args) =>
          guard(
            () => {
              const result = this.getPrompt(name, Object.fromEntries(args));
              return {
                description: result.description,
                messages: result.messages.map((m) => ({ role: m.role, content: contentToWit(m.content) })),
              };
            },
            () => ({ description: undefined, messages: [] }),
            (message) => PromptError.failed(message),
          ),
        completeArgument: (name, argument, value, context) =>
          this.completePromptArgument(name, argument, value, Object.fromEntries(context)),
      },
      resources: {
        listResources: () =>
          this.listResources().map((r) => ({
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mimeType: r.mimeType,
            size: r.size === undefined ? undefined : BigInt(r.size),
            pollMs: r.pollMs,
          })),
        listResourceTemplates: () =>
          this.listResourceTemplates().map((t) => ({
            uriTemplate: t.uriTemplate,
            name: t.name,
            title: t.title,
            description: t.description,
            mimeType: t.mimeType,
          })),
        readResource: (uri) =>
          guard(
            () =>
              this.readResource(uri).map((c) => ({
                uri: c.uri,
                mimeType: c.mimeType,
                body: c.blob !== undefined ? { tag: "blob", val: c.blob } : { tag: "text", val: c.text ?? "" },
              })),
            () => [],
            (message) => ResourceError.failed(message),
          ),
        completeTemplate: (uriTemplate, variable, value, context) =>
          this.completeTemplateVariable(uriTemplate, variable, value, Object.fromEntries(context)),
      },
    };
  }
}

/**
 * Runs `body` for Wharf: a pending question ends the call early (`onPending`: Wharf
 * ignores the result and asks the client), and anything thrown that is not already
 * a WIT error becomes `failed` with its message rather than a trap.
 */
function guard(body, onPending, failed) {
  try {
    return body();
  } catch (error) {
    if (error instanceof InputPending) return onPending();
    if (error instanceof ToolError || error instanceof PromptError || error instanceof ResourceError) throw error;
    if (error instanceof InputUnsupported || error instanceof InputFailed) throw failed(error.message);
    throw failed(error instanceof Error ? error.message : String(error));
  }
}

function contentToWit(content) {
  switch (content.type) {
    case "text":
      return { tag: "text", val: content.text };
    case "image":
    case "audio":
      return { tag: content.type, val: { data: content.data, mimeType: content.mimeType } };
    case "resource_link":
      return {
        tag: "resource-link",
        val: {
          uri: content.uri,
          name: content.name,
          title: content.title,
          description: content.description,
          mimeType: content.mimeType,
          size: content.size === undefined ? undefined : BigInt(content.size),
        },
      };
    case "resource": {
      const r = content.resource;
      return {
        tag: "embedded-resource",
        val: {
          uri: r.uri,
          mimeType: r.mimeType,
          body: r.blob !== undefined ? { tag: "blob", val: r.blob } : { tag: "text", val: r.text ?? "" },
        },
      };
    }
    default:
      throw new Error(`unknown content type ${JSON.stringify(content.type)}`);
  }
}

function callResultToWit(result) {
  return {
    content: result.content.map(contentToWit),
    structuredContent: result.structuredContent === undefined ? undefined : JSON.stringify(result.structuredContent),
    isError: result.isError,
  };
}
