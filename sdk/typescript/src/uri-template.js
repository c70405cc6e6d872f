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

/**
 * The variables of `uri` under `template` (decoded, see `decode`), or
 * `undefined` when it does not match.
 */
export function matchTemplate(template, uri) {
  const names = [];
  const reserved = [];
  let pattern = "^";
  let last = 0;
  for (const m of template.matchAll(/\{(\+?)([A-Za-z0-9_.]+)\}/g)) {
    pattern += escapeRegex(template.slice(last, m.index));
    pattern += m[1] === "+" ? "(.+?)" : "([^/?#]+)";
    names.push(m[2]);
    reserved.push(m[1] === "+");
    last = m.index + m[0].length;
  }
  pattern += escapeRegex(template.slice(last)) + "$";
  const found = new RegExp(pattern).exec(uri);
  if (!found) return undefined;
  const vars = {};
  names.forEach((name, i) => {
    vars[name] = decode(found[i + 1], reserved[i]);
  });
  return vars;
}

/** RFC 6570's reserved characters (RFC 3986 gen-delims and sub-delims). */
const RESERVED = ":/?#[]@!$&'()*+,;=";

/**
 * Percent-decodes `text` as the Rust SDK and Wharf do; left as it is if the
 * result is not UTF-8. In a `{+var}` value (`keepReserved`) a triplet that
 * stands for a reserved character stays encoded: a reserved expansion copies
 * reserved characters as they are, so `%2F` there can only stand for the
 * text `%2F`, never for a `/`.
 */
function decode(text, keepReserved) {
  // Every byte of the result as a triplet, so that decodeURIComponent makes
  // the string and refuses what is not UTF-8.
  let bytes = "";
  const utf8 = new TextEncoder();
  const hex = (byte) => "%" + byte.toString(16).padStart(2, "0");
  for (const piece of text.split(/(%[0-9A-Fa-f]{2})/)) {
    if (/^%[0-9A-Fa-f]{2}$/.test(piece)) {
      const byte = parseInt(piece.slice(1), 16);
      const kept = keepReserved && RESERVED.includes(String.fromCharCode(byte));
      bytes += kept ? [...piece].map((c) => hex(c.charCodeAt(0))).join("") : hex(byte);
    } else {
      for (const byte of utf8.encode(piece)) bytes += hex(byte);
    }
  }
  try {
    return decodeURIComponent(bytes);
  } catch {
    return text;
  }
}
