// Types of wharf-sdk (the implementation is the plain JavaScript beside this file).

import type { InferShape, JsonSchema, ObjectSchema, Shape } from "./schema.js";

export { s, Schema, ValidationError, StringSchema, NumberSchema, ArraySchema, ObjectSchema, OptionalSchema, DefaultSchema } from "./schema.js";
export type { Infer, InferShape, JsonSchema, Shape } from "./schema.js";

// ---- Contents and results ----

export type TextContent = { type: "text"; text: string };
export type BinaryContent = { type: "image" | "audio"; data: Uint8Array; mimeType: string };
export type ResourceLinkFields = {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
};
export type ResourceLinkContent = { type: "resource_link" } & ResourceLinkFields;
/** A resource's contents: `text` or `blob` (raw bytes). */
export type ResourceContents = { uri: string; mimeType?: string; text?: string; blob?: Uint8Array };
export type EmbeddedResourceContent = { type: "resource"; resource: ResourceContents };
/** One item of a result or prompt message, in MCP's JSON shape. */
export type Content = TextContent | BinaryContent | ResourceLinkContent | EmbeddedResourceContent;

/** Text (or Markdown) content. */
export declare function text(text: string): TextContent;
/** An image (raw bytes, such as PNG). */
export declare function image(data: Uint8Array, mimeType: string): BinaryContent;
/** An audio clip. */
export declare function audio(data: Uint8Array, mimeType: string): BinaryContent;
/** A link to a resource the client may read. */
export declare function resourceLink(link: ResourceLinkFields): ResourceLinkContent;
/** A resource's contents embedded in a result. */
export declare function embeddedResource(resource: ResourceContents): EmbeddedResourceContent;

/** What a tool call produced. */
export declare class ToolResult {
  constructor(content?: Content[], structuredContent?: unknown, isError?: boolean);
  readonly content: Content[];
  readonly structuredContent: unknown;
  readonly isError: boolean;
  /** A result holding text. */
  static text(value: string): ToolResult;
  /** A failed result the model should see and may correct (`isError: true`). */
  static error(message: string): ToolResult;
  /** Structured output (a JSON object) with its JSON text as content. */
  static structured(value: object): ToolResult;
  /** A result holding these contents (strings become text). */
  static of(...items: (Content | string)[]): ToolResult;
  /** Adds a content item (a string becomes text). */
  with(item: Content | string): ToolResult;
  /** The same result, flagged as an error. */
  asError(): ToolResult;
}

export type Role = "user" | "assistant";
export type PromptMessage = { role: Role; content: Content };
export type PromptResult = { description?: string; messages: PromptMessage[] };
/** A message spoken by the user (a string becomes text). */
export declare function user(content: Content | string): PromptMessage;
/** A message spoken by the assistant. */
export declare function assistant(content: Content | string): PromptMessage;

// ---- Errors ----

/** A tool call that could not run. */
export declare class ToolError extends Error {
  readonly kind: "unknown-tool" | "invalid-arguments" | "failed";
  /** The tool failed in a way the model cannot fix (a tool execution error). */
  static failed(message: string): ToolError;
  /** The arguments do not fit; clients see invalid params. */
  static invalidArguments(message: string): ToolError;
}
/** A prompt that could not be rendered. */
export declare class PromptError extends Error {
  readonly kind: "unknown-prompt" | "invalid-arguments" | "failed";
  static failed(message: string): PromptError;
  static invalidArguments(message: string): PromptError;
}
/** A resource that could not be read. */
export declare class ResourceError extends Error {
  readonly kind: "not-found" | "failed";
  /** There is no resource at `uri`. */
  static notFound(uri: string): ResourceError;
  static failed(message: string): ResourceError;
}
/** Thrown while a client's answer is pending: let it pass, the SDK ends the call. */
export declare class InputPending extends Error {
  readonly key: string;
}
/** The client lacks the capability a question needs. */
export declare class InputUnsupported extends Error {
  readonly key: string;
}
/** The question was malformed or the client failed to answer it. */
export declare class InputFailed extends Error {
  readonly key: string;
}

// ---- Host ----

export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";
/** Writes to Wharf's log, tagged with the plugin's name (`log.info(...)` etc.). */
export declare const log: ((level: LogLevel, message: string) => void) & {
  debug(message: string): void;
  info(message: string): void;
  notice(message: string): void;
  warning(message: string): void;
  error(message: string): void;
};
/** Reports progress of the current call (`total` when known). */
export declare function progress(progress: number, total?: number, message?: string): void;
/** True once the client cancelled the current call or its deadline passed. */
export declare function isCancelled(): boolean;
/** A configuration value granted by the plugin's manifest (`[config]`). */
export declare function config(key: string): string | undefined;
/** The state this call kept with `setState` in an earlier round. */
export declare function state(): string | undefined;
/** Keeps `value` (at most 16 KiB) for the next round of this call. */
export declare function setState(value: string): void;

/** A WIT `input-request`, for `ask.request`. */
export type InputRequest =
  | { tag: "elicit-form"; val: { message: string; requestedSchema: string } }
  | { tag: "elicit-url"; val: { message: string; url: string } }
  | { tag: "sampling"; val: string }
  | { tag: "list-roots" };
export type InputOutcome =
  | { tag: "answered"; val: any }
  | { tag: "pending" }
  | { tag: "unsupported" }
  | { tag: "failed"; val: string };
export type Elicited<T> = { action: "accept"; content: T } | { action: "decline" } | { action: "cancel" };
export type Root = { uri: string; name?: string };

/** Questions to the client mid-call (see the README: asking the client). */
export declare const ask: {
  /** The raw outcome, without throwing. */
  request(key: string, request: InputRequest): InputOutcome;
  /** A form; `content` is checked against `schema` (a flat object). */
  elicit<S extends Shape>(key: string, message: string, schema: ObjectSchema<S>): Elicited<InferShape<S>>;
  /** A web page for the user to visit. */
  elicitUrl(key: string, message: string, url: string): { action: "accept" | "decline" | "cancel" };
  /** `sampling/createMessage` with these params; the `CreateMessageResult`. */
  sample(key: string, params: { messages: unknown[]; maxTokens: number; [key: string]: unknown }): any;
  /** Asks the client's model `prompt`; its text answer. */
  sampleText(key: string, prompt: string, maxTokens?: number): string;
  /** The client's roots. */
  listRoots(key: string): Root[];
  /** Several questions in one round: each is asked before a pending one ends the call. */
  together<const Q extends readonly (() => unknown)[]>(...questions: Q): { [K in keyof Q]: ReturnType<Q[K]> };
};

// ---- The plugin ----

export type ToolAnnotations = {
  title?: string;
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
};

type ToolCommon<I extends Shape> = {
  /** 1 to 64 characters of `A-Z a-z 0-9 _ - .`; clients see `<plugin>_<name>`. */
  name: string;
  title?: string;
  /** What the tool does, written for a model deciding whether to call it. */
  description?: string;
  /** The arguments (default: none). Field `.describe()`s become property descriptions. */
  input?: ObjectSchema<I>;
  annotations?: ToolAnnotations;
};

export type StructuredTool<I extends Shape, O extends Shape> = ToolCommon<I> & {
  /** The structured output's schema. */
  output: ObjectSchema<O>;
  run(args: InferShape<I>): InferShape<O> | ToolResult;
};

export type PlainTool<I extends Shape> = ToolCommon<I> & {
  output?: undefined;
  run(args: InferShape<I>): string | Content | (Content | string)[] | ToolResult;
};

/** Suggestions: a list (filtered by the typed prefix) or a function. */
export type Completer = readonly string[] | ((value: string, context: Record<string, string>) => string[]);

export type PromptArgument = {
  title?: string;
  description?: string;
  required?: boolean;
  complete?: Completer;
};
type PromptArgs<A extends Record<string, PromptArgument>> = {
  [K in keyof A as A[K] extends { required: true } ? K : never]: string;
} & {
  [K in keyof A as A[K] extends { required: true } ? never : K]?: string;
};

export type PromptDefinition<A extends Record<string, PromptArgument>> = {
  name: string;
  title?: string;
  description?: string;
  arguments?: A;
  render(args: { [K in keyof PromptArgs<A>]: PromptArgs<A>[K] }): PromptMessage[] | PromptResult | string;
};

/** What `read` may return: text, bytes, or contents (several for a folder). */
export type ReadResult = string | Uint8Array | Partial<ResourceContents> | Partial<ResourceContents>[];

export type ResourceDefinition = {
  /** An absolute URI with a scheme (`notes://today`); clients see `<plugin>+<uri>`. */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  /** Re-read this often (ms) while a client is subscribed, for contents that change. */
  pollMs?: number;
  read(): ReadResult;
};

export type ResourceTemplateDefinition = {
  /** An RFC 6570 template: `{var}` is one path segment, `{+var}` any text. */
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  complete?: Record<string, Completer>;
  read(vars: Record<string, string>, uri: string): ReadResult;
};

/** A tool as listed (the JSON that `tools/list` carries, before prefixing). */
export type ListedTool = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
};

/** The WIT interface implementations that jco expects the entry module to export. */
export type WitExports = { tools: object; prompts: object; resources: object };

export declare class Plugin {
  constructor();
  /** A tool with structured output. */
  tool<I extends Shape = {}, O extends Shape = {}>(definition: StructuredTool<I, O>): this;
  /** A tool with free-form output. */
  tool<I extends Shape = {}>(definition: PlainTool<I>): this;
  prompt<const A extends Record<string, PromptArgument> = {}>(definition: PromptDefinition<A>): this;
  resource(definition: ResourceDefinition): this;
  resourceTemplate(definition: ResourceTemplateDefinition): this;

  listTools(): ListedTool[];
  /** Runs a tool as Wharf would: its result, or a thrown `ToolError`. */
  callTool(name: string, args?: object | string): ToolResult;
  listPrompts(): { name: string; title?: string; description?: string; arguments: { name: string; title?: string; description?: string; required: boolean }[] }[];
  getPrompt(name: string, args?: Record<string, string>): PromptResult;
  completePromptArgument(name: string, argument: string, value: string, context?: Record<string, string>): string[];
  listResources(): Omit<ResourceDefinition, "read">[];
  listResourceTemplates(): Omit<ResourceTemplateDefinition, "read" | "complete">[];
  readResource(uri: string): ResourceContents[];
  completeTemplateVariable(uriTemplate: string, variable: string, value: string, context?: Record<string, string>): string[];
  /** `export const { tools, prompts, resources } = plugin.exports();` */
  exports(): WitExports;
}

/** The variables of `uri` under an RFC 6570 `template`, or `undefined`. */
export declare function matchTemplate(template: string, uri: string): Record<string, string> | undefined;
/** The template's variable names, in order. */
export declare function variablesOf(template: string): string[];
