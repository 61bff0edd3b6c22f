/**
 * Wire-lenient field helpers. CLIs send every value as a string (`ttl=1h`,
 * `exportable=true`, `policies=a,b`), JSON clients send native types; both
 * must validate to the same typed value, as Vault's framework field types do.
 *
 * Each helper is a zod schema whose *input* JSON Schema describes what the
 * wire accepts (so `?help=1` and OpenAPI tell the truth) and whose *output*
 * is the parsed value a handler works with. The pure parsers are exported for
 * the core's own configuration parsing.
 */
import { z } from 'zod';
import { isStdBase64 } from './base64.js';
import { HELP_TYPE } from './describe.js';

/** Thrown by the pure parsers; the message is user-safe and never contains the value. */
export class FieldParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldParseError';
  }
}

const GO_UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3,
  'μs': 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
const GO_DURATION = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h)(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))*$/;
const GO_DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/**
 * Seconds from a duration, as Vault's parseutil.ParseDurationSecond reads it:
 * an integer number of seconds (number or numeric string), `""` (0), `"<n>d"`
 * (days), or a Go duration (`"1h30m"`, `"90s"`, `"1.5h"`). Sub-second parts
 * are truncated. Negative durations are refused.
 */
export function parseDuration(v: unknown): number {
  return durationIn(v, 1);
}

/** Milliseconds from the same syntax, for settings finer than a second ("250ms"). */
export function parseDurationMs(v: unknown): number {
  return durationIn(v, 1000);
}

/** Whole units of 1/perSecond s; integer forms are multiplied (exact), Go forms summed in ns and truncated. */
function durationIn(v: unknown, perSecond: 1 | 1000): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) throw new FieldParseError('invalid duration');
    return Math.floor(v) * perSecond;
  }
  if (typeof v !== 'string') throw new FieldParseError('invalid duration');
  const s = v.trim();
  if (s === '') return 0;
  if (/^\d+$/.test(s)) return Number(s) * perSecond;
  const days = /^(\d+)d$/.exec(s);
  if (days) return Number(days[1]) * 86400 * perSecond;
  if (!GO_DURATION.test(s)) throw new FieldParseError('invalid duration');
  let ns = 0;
  for (const m of s.matchAll(GO_DURATION_PART)) ns += Number(m[1]) * (GO_UNIT_NS[m[2] as string] ?? 0);
  if (!Number.isFinite(ns)) throw new FieldParseError('invalid duration');
  return Math.floor(ns / (1e9 / perSecond));
}

/** Go's time.Duration.String() for whole seconds ("0s", "1m30s", "1h0m0s"), as Vault prints durations such as kv's delete_version_after. */
export function formatGoDuration(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  if (total === 0) return '0s';
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

const TRUE_STRINGS = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE_STRINGS = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/**
 * A boolean as Go's strconv.ParseBool reads strings, plus JSON booleans and
 * the numbers 0 and 1. `""` is false: clients send it for a field they leave
 * unset, and Vault's field parser reads it as the zero value.
 */
export function parseBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v === 'string') {
    const s = v.trim();
    if (s === '') return false;
    if (TRUE_STRINGS.has(s)) return true;
    if (FALSE_STRINGS.has(s)) return false;
  }
  throw new FieldParseError('invalid boolean');
}

/** An integer from a JSON number or a decimal string ("3", "-2"); `""` is 0, the zero value (as for booleans). */
export function parseInteger(v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && v.trim() === '') return 0;
  if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) {
    const n = Number(v.trim());
    if (Number.isSafeInteger(n)) return n;
  }
  throw new FieldParseError('invalid integer');
}

/** A list from a JSON array or one comma-separated string; items trimmed, empty items dropped. */
export function parseCommaList(v: unknown): string[] {
  let items: unknown[];
  if (Array.isArray(v)) items = v;
  else if (typeof v === 'string') items = v.split(',');
  else throw new FieldParseError('invalid list');
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') {
      throw new FieldParseError('invalid list item');
    }
    const s = String(item).trim();
    if (s !== '') out.push(s);
  }
  return out;
}

/** A list of integers ("1,2" or [1, "2"]), as Vault's comma-int-slice fields (kv `versions`). */
export function parseCommaIntList(v: unknown): number[] {
  if (typeof v === 'number') return [parseInteger(v)];
  return parseCommaList(v).map(parseInteger);
}


/** Bytes from standard, padded base64 (what Vault's Go decoder accepts). */
export function parseBase64(v: unknown): Buffer {
  if (typeof v !== 'string' || !isStdBase64(v)) throw new FieldParseError('invalid base64');
  return Buffer.from(v, 'base64');
}

/** An object from a JSON object or a string holding a JSON object (approle `metadata` arrives as a JSON string). */
export function parseMap(v: unknown): Record<string, unknown> {
  let obj = v;
  if (typeof v === 'string') {
    if (v.trim() === '') return {};
    try {
      obj = JSON.parse(v);
    } catch {
      throw new FieldParseError('invalid JSON object');
    }
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new FieldParseError('expected an object');
  return obj as Record<string, unknown>;
}

/** Wraps a pure parser into a zod transform that reports a custom issue instead of throwing. */
function lenient<In extends z.ZodType, Out>(input: In, parse: (v: z.output<In>) => Out) {
  return input.transform((v, ctx): Out => {
    try {
      return parse(v);
    } catch (err) {
      ctx.issues.push({ code: 'custom', message: err instanceof FieldParseError ? err.message : 'invalid value', input: v });
      return z.NEVER;
    }
  });
}

const scalar = () => z.union([z.string(), z.number(), z.boolean()]);

/** Metadata key: the type help and OpenAPI show, when the wire is more lenient than what the field means. */
const WIRE_TYPE = 'strongroomType';

/** Names what a lenient field means, which its wire type list does not say (see HELP_TYPE). */
const meaning = <S extends z.ZodType>(schema: S, name: string): S => schema.meta({ [HELP_TYPE]: name }) as S;

/** Metadata keys the SDK understands on a field schema (set through `f.sensitive` / `f.query`). */
export interface FieldMeta {
  sensitive?: boolean;
  query?: boolean;
  deprecated?: boolean;
  description?: string;
}

/** Reads field metadata through optional/default/nullable wrappers. */
export function fieldMeta(schema: z.ZodType): FieldMeta {
  let cur: z.ZodType | undefined = schema;
  const out: FieldMeta = {};
  for (let depth = 0; cur && depth < 8; depth++) {
    const meta = z.globalRegistry.get(cur) as FieldMeta | undefined;
    if (meta) {
      out.sensitive ??= meta.sensitive;
      out.query ??= meta.query;
      out.deprecated ??= meta.deprecated;
      out.description ??= meta.description;
    }
    const inner: z.ZodType | undefined = (cur as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
    cur = inner;
  }
  return out;
}

/**
 * The field helpers. Chain `.describe()`, `.optional()` and `.default()` as
 * with any zod schema (`.default()` takes the parsed value: seconds for a
 * duration, an array for a list).
 */
export const f = {
  /** A string; numbers and booleans are accepted and stringified, as Vault weak-decodes them (help and OpenAPI say "string"). */
  string: () => lenient(scalar(), (v) => String(v)).meta({ [WIRE_TYPE]: 'string' }),
  /** An integer: 3 or "3"; "" is 0. */
  int: (opts: { min?: number; max?: number } = {}) =>
    meaning(
      lenient(z.union([z.number(), z.string()]), (v) => {
        const n = parseInteger(v);
        if (opts.min !== undefined && n < opts.min) throw new FieldParseError(`must be at least ${opts.min}`);
        if (opts.max !== undefined && n > opts.max) throw new FieldParseError(`must be at most ${opts.max}`);
        return n;
      }),
      'int',
    ),
  /** A boolean: true, "true", "1", "t", 0, "false"...; "" is false. */
  bool: () => meaning(lenient(z.union([z.boolean(), z.number(), z.string()]), parseBool), 'bool'),
  /** A duration, parsed to seconds: 3600, "3600", "1h", "90m", "1h30m", "2d"; "" is 0. */
  duration: () => meaning(lenient(z.union([z.number(), z.string()]), parseDuration), 'duration (sec)'),
  /** A list of strings: ["a","b"] or "a,b". */
  commaList: () => meaning(lenient(z.union([z.array(scalar()), z.string()]), parseCommaList), 'comma-separated list'),
  /** A list of integers: [1,2], "1,2" or 1. */
  commaIntList: () => meaning(lenient(z.union([z.array(z.union([z.number(), z.string()])), z.string(), z.number()]), parseCommaIntList), 'comma-separated ints'),
  /** Base64 on the wire, bytes (Buffer) in the handler. */
  base64: () => meaning(lenient(z.string(), parseBase64), 'base64'),
  /** An object, or a string holding a JSON object. Pass a schema to validate the values. */
  map: <V extends z.ZodType = z.ZodUnknown>(values?: V) =>
    meaning(
      lenient(z.union([z.record(z.string(), z.unknown()), z.string()]), (v) => {
        const obj = parseMap(v);
        if (!values) return obj as Record<string, z.output<V>>;
        const out: Record<string, z.output<V>> = {};
        for (const [k, item] of Object.entries(obj)) {
          const r = values.safeParse(item);
          if (!r.success) throw new FieldParseError(`invalid value for key "${k}"`);
          out[k] = r.data as z.output<V>;
        }
        return out;
      }),
      'map',
    ),
  /** One of the given strings, exactly. */
  enum: <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values),
  /** Any JSON value, passed through untouched (kv's `data`). */
  any: () => z.unknown(),
  /** Marks a field's value as secret: never logged, HMAC'd in audit, `sensitive` in the description. */
  sensitive: <S extends z.ZodType>(schema: S): S => schema.meta({ sensitive: true }) as S,
  /** Marks a field as a URL query parameter on reads, lists and deletes (documentation only). */
  query: <S extends z.ZodType>(schema: S): S => schema.meta({ query: true }) as S,
  /** Marks a field as deprecated in help and OpenAPI. */
  deprecated: <S extends z.ZodType>(schema: S): S => schema.meta({ deprecated: true }) as S,
};

/** Input-side JSON Schema of a field (what a client may send), without the `$schema` header. */
export function fieldJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // Our own metadata keys travel in FieldDescription flags, not inside the schema.
  delete js.$schema;
  delete js.sensitive;
  delete js.query;
  if (typeof js[WIRE_TYPE] === 'string') js.type = js[WIRE_TYPE];
  delete js[WIRE_TYPE];
  // zod omits defaults under transforms in input mode; the parsed default is still a valid wire value for our helpers.
  if (!('default' in js)) {
    const d = schema.safeParse(undefined);
    if (d.success && d.data !== undefined && !Buffer.isBuffer(d.data)) js.default = d.data;
  }
  return js;
}
