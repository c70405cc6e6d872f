// What Wharf offers a plugin during a call (the WIT `host` interface): logs,
// progress, cancellation, configuration and questions to the client. Outside a call
// (while Wharf lists tools) the host functions do nothing.

import * as wit from "wharf:plugin/host@0.1.0";
import { InputFailed, InputPending, InputUnsupported } from "./errors.js";

/** Writes `message` to Wharf's log at `level`, tagged with the plugin's name. */
export function log(level, message) {
  wit.log(level, String(message));
}
log.debug = (message) => log("debug", message);
log.info = (message) => log("info", message);
log.notice = (message) => log("notice", message);
log.warning = (message) => log("warning", message);
log.error = (message) => log("error", message);

/** Reports progress of the current call (`total` when known). */
export function progress(progress, total, message) {
  wit.progress(progress, total ?? undefined, message ?? undefined);
}

/** True once the client cancelled the current call or its deadline passed. */
export function isCancelled() {
  return wit.isCancelled();
}

/** A configuration value granted by the plugin's manifest (`[config]`), if any. */
export function config(key) {
  return wit.config(key) ?? undefined;
}

/** The state this call kept with `setState` in an earlier round, if any. */
export function state() {
  return wit.requestState() ?? undefined;
}

/** Keeps `value` (at most 16 KiB) for the next round of this call. */
export function setState(value) {
  wit.setRequestState(value);
}

function answered(key, outcome) {
  switch (outcome.tag) {
    case "answered":
      return JSON.parse(outcome.val);
    case "pending":
      throw new InputPending(key);
    case "unsupported":
      throw new InputUnsupported(key);
    default:
      throw new InputFailed(key, outcome.val);
  }
}

/**
 * Questions to the client in the middle of a call. Write the tool as if answers
 * came at once: while an answer is pending the function throws `InputPending`,
 * the SDK ends the call, and Wharf calls again from the start once the client
 * answered, when the same key returns its answer.
 */
export const ask = {
  /** The raw outcome of `request` (a WIT `input-request`), without throwing. */
  request(key, request) {
    const outcome = wit.ask(key, request);
    if (outcome.tag === "answered") return { tag: "answered", val: JSON.parse(outcome.val) };
    return outcome;
  },

  /** A form (`schema`: an `s.object` of strings, numbers, booleans, enums). */
  elicit(key, message, schema) {
    const answer = answered(
      key,
      wit.ask(key, { tag: "elicit-form", val: { message, requestedSchema: JSON.stringify(schema.toJSON()) } }),
    );
    if (answer.action === "accept") return { action: "accept", content: schema.parse(answer.content ?? {}) };
    return { action: answer.action };
  },

  /** A web page for the user to visit; the answer's `action` says if they did. */
  elicitUrl(key, message, url) {
    const answer = answered(key, wit.ask(key, { tag: "elicit-url", val: { message, url } }));
    return { action: answer.action };
  },

  /** `sampling/createMessage` with these params; the client's `CreateMessageResult`. */
  sample(key, params) {
    return answered(key, wit.ask(key, { tag: "sampling", val: JSON.stringify(params) }));
  },

  /** Asks the client's model `prompt` and returns its text answer. */
  sampleText(key, prompt, maxTokens = 400) {
    const result = ask.sample(key, {
      messages: [{ role: "user", content: { type: "text", text: prompt } }],
      maxTokens,
    });
    const content = Array.isArray(result.content) ? result.content : [result.content];
    return content
      .filter((c) => c && c.type === "text")
      .map((c) => c.text)
      .join("");
  },

  /** The client's roots: `[{ uri, name? }]`. */
  listRoots(key) {
    return answered(key, wit.ask(key, { tag: "list-roots" })).roots ?? [];
  },

  /**
   * Asks several questions in one round: runs each function, and if any answer
   * is pending throws only after all were asked, so they reach the client together.
   */
  together(...questions) {
    const answers = [];
    let pending;
    for (const question of questions) {
      try {
        answers.push(question());
      } catch (error) {
        if (!(error instanceof InputPending)) throw error;
        pending ??= error;
        answers.push(undefined);
      }
    }
    if (pending) throw pending;
    return answers;
  },
};
