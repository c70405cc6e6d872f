/** A JSON Schema document (2020-12). */
export type JsonSchema = { [key: string]: unknown };

/** A value that does not fit its schema; the message names the path of the field. */
export declare class ValidationError extends Error {
  /** The path of the field, such as `tags[1]` or `due.day` (empty at the root). */
  readonly path: string;
}

/** A schema whose checked value has type `T`. */
export declare class Schema<T> {
  /** The inferred type (never set at run time; use `Infer<typeof schema>`). */
  readonly _output: T;
  /** A description: what the value means, for the model and the user. */
  describe(description: string): this;
  /** A short human-readable title. */
  title(title: string): this;
  /** The field may be left out of its object (it is then `undefined`). */
  optional(): OptionalSchema<T>;
  /** The field may be left out; it then takes `value` (shown in the schema). */
  default(value: T): DefaultSchema<T>;
  /** `null` is also accepted. */
  nullable(): Schema<T | null>;
  /** The JSON Schema of this value. */
  toJSON(): JsonSchema;
  /** The value, checked (and with defaults filled in); throws a `ValidationError`. */
  parse(value: unknown, path?: string): T;
}

/** A field that may be absent. */
export declare class OptionalSchema<T> extends Schema<T | undefined> {
  readonly _optional: true;
}

/** A field that takes a default when absent. */
export declare class DefaultSchema<T> extends Schema<T> {
  readonly _hasDefault: true;
}

export declare class StringSchema<T extends string = string> extends Schema<T> {
  minLength(n: number): this;
  maxLength(n: number): this;
  /** A regular expression the whole string must match (ECMAScript syntax). */
  pattern(regex: string | RegExp): this;
  /** A JSON Schema format such as `date`, `email` or `uri` (shown, not checked). */
  format(format: string): this;
}

export declare class NumberSchema extends Schema<number> {
  min(n: number): this;
  max(n: number): this;
}

export declare class ArraySchema<T> extends Schema<T[]> {
  minItems(n: number): this;
  maxItems(n: number): this;
}

/** The fields of an object schema. */
export type Shape = { [key: string]: Schema<any> };

/** The type a schema checks to: `Infer<typeof args>`. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends { readonly _optional: true } ? K : never;
}[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The object type of a shape: optional fields become `key?: T`. */
export type InferShape<S extends Shape> = Simplify<
  { [K in RequiredKeys<S>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

export declare class ObjectSchema<S extends Shape> extends Schema<InferShape<S>> {
  readonly shape: S;
}

/** The schema builder: `s.object({ name: s.string().describe("Who to greet.") })`. */
export declare const s: {
  string(): StringSchema;
  number(): NumberSchema;
  integer(): NumberSchema;
  boolean(): Schema<boolean>;
  /** Exactly this value. */
  literal<const V extends string | number | boolean>(value: V): Schema<V>;
  /** One of these strings. */
  enum<const V extends readonly [string, ...string[]]>(values: V): Schema<V[number]>;
  array<T>(items: Schema<T>): ArraySchema<T>;
  /** An object with these fields; fields are required unless `.optional()` or `.default()`. */
  object<S extends Shape>(shape: S): ObjectSchema<S>;
  /** An object with any keys, each value of `values`. */
  record<T>(values: Schema<T>): Schema<{ [key: string]: T }>;
  /** The first of these schemas that the value fits. */
  union<const O extends readonly Schema<any>[]>(...options: O): Schema<Infer<O[number]>>;
  /** Any JSON value, unchecked. */
  any(): Schema<unknown>;
};
