// Matching URIs against the RFC 6570 templates a plugin declares: `{var}` matches
// one path segment (no `/`, `?` or `#`), `{+var}` any text (reserved expansion),
// and the literal text between must match exactly. Enough for the templates
// plugins write (`notes://{id}`, `files:///{+path}`); query expansions are not.

function escapeRegex(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The template's variables, in order. */
export function variablesOf(template) {
  return [...template.matchAll(/\{\+?([A-Za-z0-9_.]+)\}/g)].map((m) => m[1]);
}

/** The variables of `uri` under `template` (decoded), or `undefined` when it does not match. */
export function matchTemplate(template, uri) {
  const names = [];
  let pattern = "^";
  let last = 0;
  for (const m of template.matchAll(/\{(\+?)([A-Za-z0-9_.]+)\}/g)) {
    pattern += escapeRegex(template.slice(last, m.index));
    pattern += m[1] === "+" ? "(.+?)" : "([^/?#]+)";
    names.push(m[2]);
    last = m.index + m[0].length;
  }
  pattern += escapeRegex(template.slice(last)) + "$";
  const found = new RegExp(pattern).exec(uri);
  if (!found) return undefined;
  const vars = {};
  names.forEach((name, i) => {
    try {
      vars[name] = decodeURIComponent(found[i + 1]);
    } catch {
      vars[name] = found[i + 1];
    }
  });
  return vars;
}
