// wharf-sdk: Wharf plugins in TypeScript and JavaScript. See ../README.md.
export { s, Schema, ValidationError } from "./schema.js";
export { ToolResult, text, image, audio, resourceLink, embeddedResource, user, assistant } from "./content.js";
export { ToolError, PromptError, ResourceError, InputPending, InputUnsupported, InputFailed } from "./errors.js";
export { log, progress, isCancelled, config, state, setState, ask } from "./host.js";
export { Plugin } from "./plugin.js";
export { matchTemplate, variablesOf } from "./uri-template.js";
