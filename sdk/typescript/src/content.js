// Results and their contents, in MCP's JSON shape (so that a native test sees what
// a client will), converted to the WIT types at the component boundary (wit.js).

/** Text (or Markdown) content. */
export function text(text) {
  return { type: "text", text: String(text) };
}

/** An image (`data` raw bytes, such as PNG). */
export function image(data, mimeType) {
  return { type: "image", data, mimeType };
}

/** An audio clip. */
export function audio(data, mimeType) {
  return { type: "audio", data, mimeType };
}

/** A link to a resource: `{ uri, name, title?, description?, mimeType?, size? }`. */
export function resourceLink(link) {
  return { type: "resource_link", ...link };
}

/** A resource's contents embedded in a result: `{ uri, mimeType?, text? , blob? }`. */
export function embeddedResource(resource) {
  return { type: "resource", resource: { ...resource } };
}

function toContent(item) {
  return typeof item === "string" ? text(item) : item;
}

/** What a tool call produced: contents, optional structured output, the is-error flag. */
export class ToolResult {
  constructor(content = [], structuredContent = undefined, isError = false) {
    this.content = content;
    this.structuredContent = structuredContent;
    this.isError = isError;
  }
  /** A result holding text. */
  static text(value) {
    return new ToolResult([text(value)]);
  }
  /** A failed result the model should see and may correct (`isError: true`). */
  static error(message) {
    return new ToolResult([text(message)], undefined, true);
  }
  /** Structured output (a JSON object) with its JSON text as content. */
  static structured(value) {
    return new ToolResult([text(JSON.stringify(value))], value);
  }
  /** A result holding these contents (strings become text). */
  static of(...items) {
    return new ToolResult(items.map(toContent));
  }
  /** Adds a content item (a string becomes text). */
  with(item) {
    return new ToolResult([...this.content, toContent(item)], this.structuredContent, this.isError);
  }
  /** The same result, flagged as an error. */
  asError() {
    return new ToolResult(this.content, this.structuredContent, true);
  }
}

/** A prompt message spoken by the user (a string becomes text). */
export function user(content) {
  return { role: "user", content: toContent(content) };
}

/** A prompt message spoken by the assistant. */
export function assistant(content) {
  return { role: "assistant", content: toContent(content) };
}
