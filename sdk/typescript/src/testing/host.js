// A stand-in for the WIT `host` import, for tests under Node.js: `node --import
// wharf-sdk/testing --test` maps `wharf:plugin/host@0.1.0` here. Tests set
// `testHost.config`, `testHost.answers` (key -> JSON answer, or "pending",
// "unsupported") and read `testHost.logs`, `testHost.progress`, `testHost.asked`.

export const testHost = {
  config: {},
  answers: {},
  logs: [],
  progress: [],
  asked: {},
  state: undefined,
  cancelled: false,
  /** Forgets everything set or recorded. */
  reset() {
    Object.assign(this, { config: {}, answers: {}, logs: [], progress: [], asked: {}, state: undefined, cancelled: false });
  },
};

export function log(level, message) {
  testHost.logs.push({ level, message });
}
export function progress(progress, total, message) {
  testHost.progress.push({ progress, total, message });
}
export function isCancelled() {
  return testHost.cancelled;
}
export function config(key) {
  return testHost.config[key];
}
export function ask(key, request) {
  testHost.asked[key] = request;
  const answer = testHost.answers[key];
  if (answer === undefined || answer === "pending") return { tag: "pending" };
  if (answer === "unsupported") return { tag: "unsupported" };
  return { tag: "answered", val: JSON.stringify(answer) };
}
export function requestState() {
  return testHost.state;
}
export function setRequestState(state) {
  testHost.state = state;
}
