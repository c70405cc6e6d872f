// String tools for Wharf. `jco componentize` wraps this module into a component
// exporting the functions of the `strings` world in wit/strings.wit: each export
// below is one WIT function (camelCase here, kebab-case in WIT).

// The engine (StarlingMonkey) has no Unicode property escapes (`\p{L}`) in regular
// expressions, so letters are told apart by whether they have case or are digits.
function isLower(c) {
  return c !== c.toUpperCase();
}
function isUpper(c) {
  return c !== c.toLowerCase();
}
function isWordChar(c) {
  return isLower(c) || isUpper(c) || /[0-9]/.test(c) || c.codePointAt(0) > 0x2ff;
}

/** Splits text into words: at spaces, punctuation, `_`, `-` and at lower-to-upper
 * case changes (so `camelCase` is two words). Apostrophes inside words are kept. */
function words(text) {
  const found = [];
  let current = "";
  let previous = "";
  for (const c of text) {
    if (isWordChar(c) || (c === "'" && current !== "")) {
      if (isUpper(c) && (isLower(previous) || /[0-9]/.test(previous))) {
        // camelCase: a new word starts at the capital.
        found.push(current);
        current = "";
      } else if (isLower(c) && isUpper(previous) && current.length > 1) {
        // HTTPResponse: the last capital of a run starts the next word.
        found.push(current.slice(0, -1));
        current = previous;
      }
      current += c;
    } else if (current !== "") {
      found.push(current);
      current = "";
    }
    previous = c;
  }
  found.push(current);
  return found
    .map((word) => word.replace(/'+$/, ""))
    .filter((word) => word.length > 0);
}

function capitalise(word) {
  const [first, ...rest] = Array.from(word);
  return first.toUpperCase() + rest.join("").toLowerCase();
}

// Latin letters with diacritics and what they become in a slug. (The engine has
// no Unicode normalisation, `String.prototype.normalize`, to do this for us.)
const FOLDS = {
  a: "àáâãäåāăą", c: "çćĉċč", d: "ďđð", e: "èéêëēĕėęě", g: "ĝğġģ", h: "ĥħ",
  i: "ìíîïĩīĭįı", j: "ĵ", k: "ķ", l: "ĺļľŀł", n: "ñńņňŉ", o: "òóôõöøōŏő",
  r: "ŕŗř", s: "śŝşš", t: "ţťŧ", u: "ùúûüũūŭůűų", w: "ŵ", y: "ýÿŷ", z: "źżž",
  ae: "æ", oe: "œ", ss: "ß", th: "þ",
};
const FOLD = new Map(
  Object.entries(FOLDS).flatMap(([plain, marked]) =>
    Array.from(marked, (c) => [c, plain]),
  ),
);

export function slugify(text) {
  return Array.from(text.toLowerCase(), (c) => FOLD.get(c) ?? c)
    .join("")
    .replace(/['\u2019]/g, "")
    .split(/[^a-z0-9]+/)
    .filter((part) => part.length > 0)
    .join("-");
}

export function wordCount(text) {
  return {
    words: words(text).length,
    characters: Array.from(text).length,
    lines: text.length === 0 ? 0 : text.split("\n").length,
  };
}

export function convertCase(text, style) {
  const parts = words(text);
  switch (style) {
    case "lower":
      return parts.map((w) => w.toLowerCase()).join(" ");
    case "upper":
      return parts.map((w) => w.toUpperCase()).join(" ");
    case "title":
      return parts.map(capitalise).join(" ");
    case "snake":
      return parts.map((w) => w.toLowerCase()).join("_");
    case "kebab":
      return parts.map((w) => w.toLowerCase()).join("-");
    case "camel":
      return parts
        .map((w, i) => (i === 0 ? w.toLowerCase() : capitalise(w)))
        .join("");
    default:
      throw new Error(`unknown case style ${style}`);
  }
}
