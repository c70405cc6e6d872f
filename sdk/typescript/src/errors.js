// Why a call has no ordinary result. Each error carries the WIT variant it becomes
// (`payload`, as jco's bindings expect of a thrown `result` error).

function withPayload(error, tag, message) {
  error.payload = { tag, val: message };
  return error;
}

/** A tool call that could not run: `failed` (a tool execution error) or `invalidArguments`. */
export class ToolError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "ToolError";
    this.kind = kind;
    withPayload(this, kind, message);
  }
  /** The tool failed in a way the model cannot fix; `message` says why. */
  static failed(message) {
    return new ToolError("failed", message);
  }
  /** The arguments do not fit; `message` says how. Clients see invalid params. */
  static invalidArguments(message) {
    return new ToolError("invalid-arguments", message);
  }
}

/** A prompt that could not be rendered. */
export class PromptError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "PromptError";
    this.kind = kind;
    withPayload(this, kind, message);
  }
  static failed(message) {
    return new PromptError("failed", message);
  }
  static invalidArguments(message) {
    return new PromptError("invalid-arguments", message);
  }
}

/** A resource that could not be read. */
export class ResourceError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "ResourceError";
    this.kind = kind;
    withPayload(this, kind, message);
  }
  /** There is no resource at `uri`. */
  static notFound(uri) {
    return new ResourceError("not-found", uri);
  }
  static failed(message) {
    return new ResourceError("failed", message);
  }
}

/**
 * Thrown by the `ask` functions when the client's answer is not known yet: the SDK
 * ends the call early and Wharf calls again, from the start, once it is answered.
 * Let it pass (do not catch it).
 */
export class InputPending extends Error {
  constructor(key) {
    super(`the answer to \`${key}\` is pending`);
    this.name = "InputPending";
    this.key = key;
  }
}

/** The client lacks the capability a question needs (elicitation, sampling or roots). */
export class InputUnsupported extends Error {
  constructor(key) {
    super(`the client cannot answer \`${key}\`: it lacks the capability`);
    this.name = "InputUnsupported";
    this.key = key;
  }
}

/** The question was malformed or the client failed to answer it. */
export class InputFailed extends Error {
  constructor(key, message) {
    super(`asking \`${key}\` failed: ${message}`);
    this.name = "InputFailed";
    this.key = key;
  }
}
