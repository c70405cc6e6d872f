// A small schema builder: each schema knows its JSON Schema (2020-12) and how to
// check a JSON value against it. The TypeScript declarations (schema.d.ts) infer
// the checked value's type from the builder calls, so a tool's argument type, its
// input schema and its argument checking come from one definition, as schemars and
// serde give the Rust SDK. Plain JavaScript with no dependency: it is bundled into
// a component as it is.

/** A value that does not fit its schema; the message names the path of the field. */
export class ValidationError extends Error {
  constructor(path, message) {
    super(path ? `\`${path}\`: ${message}` : message);
    this.name = "ValidationError";
    this.path = path;
  }
}

function describeValue(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "boolean") return `${value}`;
  return `an ${typeof value}`;
}

function join(path, key) {
  return path ? `${path}.${key}` : key;
}

/** The base of every schema: modifiers return a modified copy. */
export class Schema {
  constructor(json, check) {
    this._json = json;
    this._check = check;
    this._optional = false;
    this._hasDefault = false;
    this._nullable = false;
  }

  _with(patch) {
    const copy = Object.create(Object.getPrototypeOf(this));
    Object.assign(copy, this, patch);
    return copy;
  }

  _set(key, value) {
    return this._with({ _json: { ...this._json, [key]: value } });
  }

  /** A description: what the value means, for the model and the user. */
  describe(description) {
    return this._set("description", description);
  }

  /** A short human-readable title. */
  title(title) {
    return this._set("title", title);
  }

  /** The field may be left out of its object (it is then `undefined`). */
  optional() {
    return this._with({ _optional: true });
  }

  /** The field may be left out; it then takes `value` (shown in the schema). */
  default(value) {
    return this._with({ _hasDefault: true, _default: value, _json: { ...this._json, default: value } });
  }

  /** `null` is also accepted. */
  nullable() {
    return this._with({ _nullable: true });
  }

  /** The JSON Schema of this value. */
  toJSON() {
    const json = { ...this._json };
    if (this._nullable) {
      if (typeof json.type === "string") {
        json.type = [json.type, "null"];
      } else {
        const { description, title, default: dflt, ...rest } = json;
        const wrapped = { anyOf: [rest, { type: "null" }] };
        if (title !== undefined) wrapped.title = title;
        if (description !== undefined) wrapped.description = description;
        if (dflt !== undefined) wrapped.default = dflt;
        return wrapped;
      }
    }
    return json;
  }

  /** The value, checked (and with defaults filled in); throws a `ValidationError`. */
  parse(value, path = "") {
    if (value === null && this._nullable) return null;
    return this._check(value, path);
  }
}

export class StringSchema extends Schema {
  minLength(n) {
    return this._set("minLength", n);
  }
  maxLength(n) {
    return this._set("maxLength", n);
  }
  /** A regular expression the whole string must match (ECMAScript syntax). */
  pattern(regex) {
    return this._set("pattern", typeof regex === "string" ? regex : regex.source);
  }
  /** A JSON Schema format such as `date`, `email` or `uri` (shown, not checked). */
  format(format) {
    return this._set("format", format);
  }
}

export class NumberSchema extends Schema {
  min(n) {
    return this._set("minimum", n);
  }
  max(n) {
    return this._set("maximum", n);
  }
}

export class ArraySchema extends Schema {
  minItems(n) {
    return this._set("minItems", n);
  }
  maxItems(n) {
    return this._set("maxItems", n);
  }
}

export class ObjectSchema extends Schema {}

function checkString(value, path, json) {
  if (typeof value !== "string") {
    throw new ValidationError(path, `expected a string, got ${describeValue(value)}`);
  }
  if (json.minLength !== undefined && value.length < json.minLength) {
    throw new ValidationError(path, `must be at least ${json.minLength} characters long`);
  }
  if (json.maxLength !== undefined && value.length > json.maxLength) {
    throw new ValidationError(path, `must be at most ${json.maxLength} characters long`);
  }
  if (json.pattern !== undefined && !new RegExp(json.pattern).test(value)) {
    throw new ValidationError(path, `must match the pattern ${json.pattern}`);
  }
  return value;
}

function checkNumber(value, path, json, integer) {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new ValidationError(path, `expected a number, got ${describeValue(value)}`);
  }
  if (integer && !Number.isInteger(value)) {
    throw new ValidationError(path, `expected an integer, got ${describeValue(value)}`);
  }
  if (json.minimum !== undefined && value < json.minimum) {
    throw new ValidationError(path, `must be at least ${json.minimum}`);
  }
  if (json.maximum !== undefined && value > json.maximum) {
    throw new ValidationError(path, `must be at most ${json.maximum}`);
  }
  return value;
}

function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The schema builder: `s.object({ name: s.string().describe("Who to greet.") })`. */
export const s = {
  string() {
    // Checks are called as methods of the final copy, so they see the JSON that
    // later modifiers (minLength, pattern, ...) set.
    return new StringSchema({ type: "string" }, function (v, p) {
      return checkString(v, p, this._json);
    });
  },
  number() {
    return new NumberSchema({ type: "number" }, function (v, p) {
        return checkNumber(v, p, this._json, false);
      });
  },
  integer() {
    return new NumberSchema({ type: "integer" }, function (v, p) {
        return checkNumber(v, p, this._json, true);
      });
  },
  boolean() {
    return new Schema({ type: "boolean" }, (v, p) => {
      if (typeof v !== "boolean") throw new ValidationError(p, `expected true or false, got ${describeValue(v)}`);
      return v;
    });
  },
  /** Exactly this value. */
  literal(value) {
    return new Schema({ const: value }, (v, p) => {
      if (v !== value) throw new ValidationError(p, `expected ${JSON.stringify(value)}, got ${describeValue(v)}`);
      return v;
    });
  },
  /** One of these strings. */
  enum(values) {
    const list = [...values];
    return new Schema({ type: "string", enum: list }, (v, p) => {
      if (!list.includes(v)) {
        throw new ValidationError(p, `expected one of ${list.map((x) => JSON.stringify(x)).join(", ")}, got ${describeValue(v)}`);
      }
      return v;
    });
  },
  array(items) {
    return new ArraySchema({ type: "array", items: items.toJSON() }, function (v, p) {
        if (!Array.isArray(v)) throw new ValidationError(p, `expected an array, got ${describeValue(v)}`);
        const json = this._json;
        if (json.minItems !== undefined && v.length < json.minItems) {
          throw new ValidationError(p, `must have at least ${json.minItems} items`);
        }
        if (json.maxItems !== undefined && v.length > json.maxItems) {
          throw new ValidationError(p, `must have at most ${json.maxItems} items`);
        }
        return v.map((item, i) => items.parse(item, `${p}[${i}]`));
      });
  },
  /** An object with these fields; fields are required unless `.optional()` or `.default()`. */
  object(shape) {
    const properties = {};
    const required = [];
    for (const [key, field] of Object.entries(shape)) {
      properties[key] = field.toJSON();
      if (!field._optional && !field._hasDefault) required.push(key);
    }
    const json = { type: "object", properties };
    if (required.length > 0) json.required = required;
    const schema = new ObjectSchema(json, (v, p) => {
      if (!isPlainObject(v)) throw new ValidationError(p, `expected an object, got ${describeValue(v)}`);
      const out = {};
      for (const [key, field] of Object.entries(shape)) {
        const path = join(p, key);
        if (v[key] === undefined) {
          if (field._hasDefault) out[key] = structuredCloneJson(field._default);
          else if (!field._optional) throw new ValidationError(path, "missing required field");
          continue;
        }
        out[key] = field.parse(v[key], path);
      }
      return out;
    });
    schema.shape = shape;
    return schema;
  },
  /** An object with any keys, each value of `values`. */
  record(values) {
    return new Schema({ type: "object", additionalProperties: values.toJSON() }, (v, p) => {
      if (!isPlainObject(v)) throw new ValidationError(p, `expected an object, got ${describeValue(v)}`);
      const out = {};
      for (const [key, value] of Object.entries(v)) out[key] = values.parse(value, join(p, key));
      return out;
    });
  },
  /** The first of these schemas that the value fits. */
  union(...options) {
    return new Schema({ anyOf: options.map((o) => o.toJSON()) }, (v, p) => {
      const reasons = [];
      for (const option of options) {
        try {
          return option.parse(v, p);
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          reasons.push(error.message);
        }
      }
      throw new ValidationError(p, `fits none of the alternatives (${reasons.join("; ")})`);
    });
  },
  /** Any JSON value, unchecked. */
  any() {
    return new Schema({}, (v) => v);
  },
};

function structuredCloneJson(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
