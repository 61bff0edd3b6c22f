/**
 * The one template language of the engines: database and RabbitMQ
 * `username_template`, LDAP username templates and LDIF. It is the subset of
 * Go's text/template that Vault's templates use, with Vault's function set
 * (sdk/helper/template):
 *
 *   text {{ .Field }} text           a field of the data, with a leading period; `.` is the data
 *   {{ .A | f 1 | g }}               pipes: the piped value is the LAST argument, as in Go
 *   {{ printf "%s-%s" .A (f .B) }}   parentheses, "strings", `raw strings`, numbers, true/false
 *   {{- x -}}                        trim the whitespace before / after
 *   {{/* comment * /}}                comments
 *   {{ if P }} .. {{ else if Q }} .. {{ else }} .. {{ end }}   with eq, ne, not, and, or, len
 *
 * Functions: random N, truncate N, truncate_sha256 N, uppercase, lowercase,
 * replace FROM TO, sha256, base64, unix_time, unix_time_millis,
 * timestamp LAYOUT, uuid, printf FORMAT ARGS..., plus the caller's own
 * (`extraFunctions`: LDIF adds utf16le). A template is compiled once (a typo is
 * a 400 naming the field at configuration time) and rendered per credential:
 * compileTemplate keeps what it compiled, so an engine that compiles on every
 * credential parses each template once all the same.
 * Values are strings, numbers, booleans, or bytes (Buffer: what utf16le makes,
 * so `| utf16le | base64` encodes the bytes themselves).
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { badRequest } from '../errors.js';

export type TemplateValue = string | number | boolean | Buffer | Record<string, unknown> | null | undefined;
export type TemplateFunction = (...args: TemplateValue[]) => TemplateValue;

export interface TemplateOptions {
  /** The field the template came from; errors read `invalid <field>: ...`. */
  field: string;
  /** Functions beyond the common set (LDIF: utf16le). */
  extraFunctions?: Record<string, TemplateFunction>;
}

export interface CompiledTemplate {
  /** Renders with `data` as `.`; a missing field or a failing function is a 400 naming the field. */
  render(data: Record<string, unknown>): string;
}

type Arg =
  | { kind: 'field'; path: string[] }
  | { kind: 'literal'; value: TemplateValue }
  | { kind: 'ident'; name: string }
  | { kind: 'pipeline'; commands: Arg[][] };

type Item =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Arg }
  | { kind: 'if'; branches: Array<{ cond: Arg | null; body: Item[] }> };

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

class TemplateError extends Error {}
const fail = (msg: string): never => {
  throw new TemplateError(msg);
};

function tokenize(src: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === '|') {
      tokens.push(c);
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      if (j >= src.length) fail('unterminated string');
      tokens.push(src.slice(i, j + 1));
      i = j + 1;
    } else if (c === '`') {
      const j = src.indexOf('`', i + 1);
      if (j < 0) fail('unterminated raw string');
      tokens.push(src.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < src.length && !/[\s()|"`]/.test(src[j] as string)) j++;
      tokens.push(src.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

function parsePipeline(tokens: string[], pos: { i: number }, closer: string | null): Arg {
  const commands: Arg[][] = [[]];
  for (;;) {
    const t = tokens[pos.i];
    if (t === undefined) {
      if (closer) fail(`missing "${closer}"`);
      break;
    }
    if (t === closer) {
      pos.i++;
      break;
    }
    pos.i++;
    const cmd = commands[commands.length - 1] as Arg[];
    if (t === '|') {
      if (cmd.length === 0) fail('empty command in pipeline');
      commands.push([]);
    } else if (t === '(') {
      cmd.push(parsePipeline(tokens, pos, ')'));
    } else if (t === ')') {
      fail('unexpected ")"');
    } else if (t.startsWith('"')) {
      try {
        cmd.push({ kind: 'literal', value: JSON.parse(t) as string });
      } catch {
        fail(`bad string ${t}`);
      }
    } else if (t.startsWith('`')) {
      cmd.push({ kind: 'literal', value: t.slice(1, -1) });
    } else if (/^-?\d+$/.test(t)) {
      cmd.push({ kind: 'literal', value: Number(t) });
    } else if (t === 'true' || t === 'false') {
      cmd.push({ kind: 'literal', value: t === 'true' });
    } else if (t === '.') {
      cmd.push({ kind: 'field', path: [] });
    } else if (/^(\.[A-Za-z_]\w*)+$/.test(t)) {
      cmd.push({ kind: 'field', path: t.slice(1).split('.') });
    } else if (/^[A-Za-z_]\w*$/.test(t)) {
      cmd.push({ kind: 'ident', name: t });
    } else {
      fail(`unexpected ${JSON.stringify(t)}`);
    }
  }
  if ((commands[commands.length - 1] as Arg[]).length === 0) fail('empty pipeline');
  return { kind: 'pipeline', commands };
}

const parseExpr = (body: string): Arg => parsePipeline(tokenize(body), { i: 0 }, null);

/** Splits the source into text and actions, applying trim markers and dropping comments. */
function lex(src: string): Array<{ kind: 'text'; text: string } | { kind: 'action'; body: string }> {
  const out: Array<{ kind: 'text'; text: string } | { kind: 'action'; body: string }> = [];
  let i = 0;
  let trimNext = false;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    let text = open < 0 ? src.slice(i) : src.slice(i, open);
    if (trimNext) text = text.trimStart();
    if (open < 0) {
      if (text) out.push({ kind: 'text', text });
      break;
    }
    const close = src.indexOf('}}', open + 2);
    if (close < 0) fail('unclosed action');
    let body = src.slice(open + 2, close);
    // Go's trim markers: "{{- " eats the whitespace before, " -}}" after.
    if (/^-\s/.test(body)) {
      text = text.trimEnd();
      body = body.slice(1);
    }
    trimNext = /\s-$/.test(body);
    if (trimNext) body = body.slice(0, -1);
    if (text) out.push({ kind: 'text', text });
    const trimmed = body.trim();
    if (trimmed.startsWith('/*')) {
      if (!trimmed.endsWith('*/')) fail('unclosed comment');
    } else {
      out.push({ kind: 'action', body: trimmed });
    }
    i = close + 2;
  }
  return out;
}

/** Builds the tree of text, actions and if/else/end blocks. */
function parse(src: string): Item[] {
  const pieces = lex(src);
  let p = 0;
  const block = (inIf: boolean): { items: Item[]; end: 'end' | 'else' | 'eof'; elseBody?: string } => {
    const items: Item[] = [];
    while (p < pieces.length) {
      const piece = pieces[p++]!;
      if (piece.kind === 'text') {
        items.push({ kind: 'text', text: piece.text });
        continue;
      }
      const word = /^(\w+)\b\s*(.*)$/s.exec(piece.body);
      const keyword = word?.[1];
      if (keyword === 'end' || keyword === 'else') {
        if (!inIf) fail(`unexpected {{${keyword}}}`);
        return keyword === 'end' ? { items, end: 'end' } : { items, end: 'else', elseBody: word?.[2] ?? '' };
      }
      if (keyword === 'if') {
        items.push(parseIf(word?.[2] ?? ''));
        continue;
      }
      if (keyword === 'range' || keyword === 'with' || keyword === 'define' || keyword === 'template' || keyword === 'block') fail(`{{${keyword}}} is not supported`);
      items.push({ kind: 'action', pipe: parseExpr(piece.body) });
    }
    if (inIf) fail('missing {{end}}');
    return { items, end: 'eof' };
  };
  const parseIf = (condSrc: string): Item => {
    if (!condSrc.trim()) fail('missing condition in {{if}}');
    const branches: Array<{ cond: Arg | null; body: Item[] }> = [];
    let cond: Arg | null = parseExpr(condSrc);
    for (;;) {
      const b = block(true);
      branches.push({ cond, body: b.items });
      if (b.end === 'end') break;
      const rest = (b.elseBody ?? '').trim();
      if (cond === null) fail('{{else}} after {{else}}');
      if (rest === '') cond = null;
      else {
        const m = /^if\s+(.+)$/s.exec(rest);
        if (!m) fail(`unexpected {{else ${rest}}}`);
        cond = parseExpr(m![1]!);
      }
    }
    return { kind: 'if', branches };
  };
  return block(false).items;
}

const asInt = (v: unknown, fn: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return fail(`${fn} needs a non-negative integer`);
  return v;
};

/** Text of a value as it lands in the output (bytes byte for byte, as Go writes a []byte's string). */
export function templateText(v: unknown): string {
  if (Buffer.isBuffer(v)) return v.toString('latin1');
  if (v === null || v === undefined) return '<no value>';
  return typeof v === 'string' ? v : String(v);
}

const truthy = (v: unknown): boolean => !(v === false || v === 0 || v === '' || v === null || v === undefined || (Buffer.isBuffer(v) && v.length === 0));

/** Go time layout tokens used in practice (`timestamp "2006-01-02T15:04:05Z07:00"`), rendered in UTC. */
function formatGoTime(layout: string, d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const map: Record<string, string> = {
    '2006': String(d.getUTCFullYear()),
    '01': p(d.getUTCMonth() + 1),
    '02': p(d.getUTCDate()),
    '15': p(d.getUTCHours()),
    '04': p(d.getUTCMinutes()),
    '05': p(d.getUTCSeconds()),
    '.000': `.${p(d.getUTCMilliseconds(), 3)}`,
    'Z07:00': 'Z',
    '-0700': '+0000',
    MST: 'UTC',
  };
  return layout.replace(/2006|Z07:00|-0700|MST|\.000|01|02|15|04|05/g, (t) => map[t] ?? t);
}

/** Go's fmt verbs in use: %s %v %d %q %%. */
function printf(format: string, args: unknown[]): string {
  let n = 0;
  return format.replace(/%([%svdq])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    if (n >= args.length) return `%!${verb}(MISSING)`;
    const v = args[n++];
    if (verb === 'd' && typeof v === 'number') return String(Math.trunc(v));
    if (verb === 'q') return JSON.stringify(templateText(v));
    return templateText(v);
  });
}

const COMMON: Record<string, { arity: number | 'any'; fn: (...a: unknown[]) => TemplateValue }> = {
  random: {
    arity: 1,
    fn: (n) => {
      const len = asInt(n, 'random');
      let s = '';
      for (let i = 0; i < len; i++) s += ALNUM[randomInt(ALNUM.length)];
      return s;
    },
  },
  truncate: { arity: 2, fn: (n, s) => templateText(s).slice(0, asInt(n, 'truncate')) },
  truncate_sha256: {
    arity: 2,
    fn: (n, v) => {
      const max = asInt(n, 'truncate_sha256');
      const s = templateText(v);
      if (s.length <= max) return s;
      if (max < 8) fail('truncate_sha256 needs at least 8 characters');
      return s.slice(0, max - 8) + createHash('sha256').update(s).digest('hex').slice(0, 8);
    },
  },
  uppercase: { arity: 1, fn: (s) => templateText(s).toUpperCase() },
  lowercase: { arity: 1, fn: (s) => templateText(s).toLowerCase() },
  replace: { arity: 3, fn: (from, to, s) => templateText(s).split(templateText(from)).join(templateText(to)) },
  sha256: { arity: 1, fn: (s) => createHash('sha256').update(Buffer.isBuffer(s) ? s : templateText(s)).digest('hex') },
  base64: { arity: 1, fn: (s) => (Buffer.isBuffer(s) ? s : Buffer.from(templateText(s), 'utf8')).toString('base64') },
  unix_time: { arity: 0, fn: () => String(Math.floor(Date.now() / 1000)) },
  unix_time_millis: { arity: 0, fn: () => String(Date.now()) },
  timestamp: { arity: 1, fn: (layout) => formatGoTime(templateText(layout), new Date()) },
  uuid: { arity: 0, fn: () => randomUUID() },
  printf: {
    arity: 'any',
    fn: (...a) => {
      if (a.length < 1) fail('printf needs a format');
      return printf(templateText(a[0]), a.slice(1));
    },
  },
  eq: { arity: 'any', fn: (a, ...rest) => (rest.length === 0 ? fail('eq needs two arguments') : rest.some((b) => templateText(a) === templateText(b))) },
  ne: { arity: 2, fn: (a, b) => templateText(a) !== templateText(b) },
  not: { arity: 1, fn: (a) => !truthy(a) },
  and: { arity: 'any', fn: (...a) => (a.length === 0 ? fail('and needs arguments') : (a.find((v) => !truthy(v)) ?? a[a.length - 1]) as TemplateValue) },
  or: { arity: 'any', fn: (...a) => (a.length === 0 ? fail('or needs arguments') : (a.find((v) => truthy(v)) ?? a[a.length - 1]) as TemplateValue) },
  len: { arity: 1, fn: (a) => (Buffer.isBuffer(a) ? a.length : templateText(a).length) },
};

/** UTF-16LE bytes of a string: Active Directory's unicodePwd takes the quoted password so encoded. */
export const utf16le: TemplateFunction = (s) => Buffer.from(templateText(s), 'utf16le');

// Compiled templates, per set of extra functions (pass the same object each time to share it), by field and source.
// A compiled template holds no state, so one serves every caller; the oldest go first past the bound.
const COMPILED_PER_FUNCTION_SET = 256;
const NO_EXTRA: Record<string, TemplateFunction> = {};
const compiled = new WeakMap<Record<string, TemplateFunction>, Map<string, CompiledTemplate>>();

/** Compiles a template, or answers the one compiled before; a syntax error is a 400 `invalid <field>: ...`. */
export function compileTemplate(src: string, opts: TemplateOptions): CompiledTemplate {
  const extra = opts.extraFunctions ?? NO_EXTRA;
  let known = compiled.get(extra);
  if (!known) compiled.set(extra, (known = new Map()));
  const key = `${opts.field}\0${src}`;
  const hit = known.get(key);
  if (hit) return hit;
  const fresh = compile(src, opts.field, extra);
  if (known.size >= COMPILED_PER_FUNCTION_SET) known.delete(known.keys().next().value as string);
  known.set(key, fresh);
  return fresh;
}

function compile(src: string, field: string, extra: Record<string, TemplateFunction>): CompiledTemplate {
  const wrap = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof TemplateError) throw badRequest(`invalid ${field}: ${err.message}`);
      throw err;
    }
  };
  const items = wrap(() => parse(src));

  const call = (name: string, args: unknown[]): unknown => {
    const own = Object.hasOwn(extra, name) ? extra[name] : undefined;
    if (own) return own(...(args as TemplateValue[]));
    const common = Object.hasOwn(COMMON, name) ? COMMON[name] : undefined;
    if (!common) return fail(`function "${name}" not defined`);
    if (common.arity !== 'any' && args.length !== common.arity) fail(`${name} takes ${common.arity} argument${common.arity === 1 ? '' : 's'}, got ${args.length}`);
    return common.fn(...args);
  };

  const evaluate = (node: Arg, data: Record<string, unknown>): unknown => {
    switch (node.kind) {
      case 'field': {
        let cur: unknown = data;
        for (const key of node.path) {
          if (cur === null || typeof cur !== 'object' || Buffer.isBuffer(cur) || !Object.hasOwn(cur, key)) return fail(`no field .${node.path.join('.')}`);
          cur = (cur as Record<string, unknown>)[key];
        }
        return cur;
      }
      case 'literal':
        return node.value;
      case 'ident':
        return call(node.name, []);
      case 'pipeline': {
        let piped: unknown[] = [];
        for (const cmd of node.commands) {
          const [head, ...rest] = cmd as [Arg, ...Arg[]];
          if (head.kind === 'ident') {
            piped = [call(head.name, [...rest.map((a) => evaluate(a, data)), ...piped])];
          } else {
            if (rest.length > 0 || piped.length > 0) fail('only a function can take arguments');
            piped = [evaluate(head, data)];
          }
        }
        return piped[0];
      }
    }
  };

  const run = (list: Item[], data: Record<string, unknown>): string => {
    let out = '';
    for (const item of list) {
      if (item.kind === 'text') out += item.text;
      else if (item.kind === 'action') out += templateText(evaluate(item.pipe, data));
      else {
        const branch = item.branches.find((b) => b.cond === null || truthy(evaluate(b.cond, data)));
        if (branch) out += run(branch.body, data);
      }
    }
    return out;
  };

  return { render: (data) => wrap(() => run(items, data)) };
}

/** Compiles and renders once. */
export function renderTemplate(src: string, data: Record<string, unknown>, opts: TemplateOptions): string {
  return compileTemplate(src, opts).render(data);
}

/**
 * Checks a template at configuration time by rendering it over sample data,
 * so an unknown function or field is a 400 on the write, not on the first
 * credential. `sample` names every field the template may use.
 */
export function validateTemplate(src: string, sample: Record<string, unknown>, opts: TemplateOptions): void {
  compileTemplate(src, opts).render(sample);
}
