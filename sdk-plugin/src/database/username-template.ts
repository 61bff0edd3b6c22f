/**
 * Username templates, the subset of Go's text/template that Vault's
 * `username_template` uses: `{{.DisplayName}}`, pipelines with `|`,
 * parentheses, string/number literals and these functions (Vault's
 * sdk/helper/template set plus `printf`): random N, truncate N, truncate_sha256 N,
 * uppercase, lowercase, replace OLD NEW, sha256, base64, unix_time,
 * unix_time_millis, timestamp LAYOUT, uuid, printf FORMAT ARGS...
 * A piped value is the last argument, as in Go.
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import { badRequest } from '../errors.js';

export interface UsernameTemplateData {
  DisplayName: string;
  RoleName: string;
}

type Node =
  | { kind: 'field'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'ident'; name: string }
  | { kind: 'pipeline'; commands: Node[][] };

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const fail = (msg: string): never => {
  throw badRequest(`invalid username_template: ${msg}`);
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

function parsePipeline(tokens: string[], pos: { i: number }, closer: string | null): Node {
  const commands: Node[][] = [[]];
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
    const cmd = commands[commands.length - 1] as Node[];
    if (t === '|') {
      if (cmd.length === 0) fail('empty command in pipeline');
      commands.push([]);
    } else if (t === '(') {
      cmd.push(parsePipeline(tokens, pos, ')'));
    } else if (t === ')') {
      fail('unexpected ")"');
    } else if (t.startsWith('"')) {
      try {
        cmd.push({ kind: 'string', value: JSON.parse(t) as string });
      } catch {
        fail(`bad string ${t}`);
      }
    } else if (t.startsWith('`')) {
      cmd.push({ kind: 'string', value: t.slice(1, -1) });
    } else if (/^-?\d+$/.test(t)) {
      cmd.push({ kind: 'number', value: Number(t) });
    } else if (/^\.[A-Za-z_]\w*$/.test(t)) {
      cmd.push({ kind: 'field', name: t.slice(1) });
    } else if (/^[A-Za-z_]\w*$/.test(t)) {
      cmd.push({ kind: 'ident', name: t });
    } else {
      fail(`unexpected ${JSON.stringify(t)}`);
    }
  }
  if ((commands[commands.length - 1] as Node[]).length === 0) fail('empty pipeline');
  return { kind: 'pipeline', commands };
}

const asInt = (v: unknown, fn: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return fail(`${fn} needs a non-negative integer`);
  return v;
};
const asString = (v: unknown): string => (typeof v === 'string' ? v : String(v));

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

function printf(format: string, args: unknown[]): string {
  let n = 0;
  return format.replace(/%([%svd])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    if (n >= args.length) return `%!${verb}(MISSING)`;
    const v = args[n++];
    return verb === 'd' && typeof v === 'number' ? String(Math.trunc(v)) : asString(v);
  });
}

function call(name: string, args: unknown[]): unknown {
  const need = (k: number) => {
    if (args.length !== k) fail(`${name} takes ${k} argument${k === 1 ? '' : 's'}, got ${args.length}`);
  };
  switch (name) {
    case 'random': {
      need(1);
      const len = asInt(args[0], name);
      let s = '';
      for (let i = 0; i < len; i++) s += ALNUM[randomInt(ALNUM.length)];
      return s;
    }
    case 'truncate': {
      need(2);
      return asString(args[1]).slice(0, asInt(args[0], name));
    }
    case 'truncate_sha256': {
      need(2);
      const max = asInt(args[0], name);
      const s = asString(args[1]);
      if (s.length <= max) return s;
      if (max < 8) fail('truncate_sha256 needs at least 8 characters');
      return s.slice(0, max - 8) + createHash('sha256').update(s).digest('hex').slice(0, 8);
    }
    case 'uppercase':
      need(1);
      return asString(args[0]).toUpperCase();
    case 'lowercase':
      need(1);
      return asString(args[0]).toLowerCase();
    case 'replace':
      need(3);
      return asString(args[2]).split(asString(args[0])).join(asString(args[1]));
    case 'sha256':
      need(1);
      return createHash('sha256').update(asString(args[0])).digest('hex');
    case 'base64':
      need(1);
      return Buffer.from(asString(args[0]), 'utf8').toString('base64');
    case 'unix_time':
      need(0);
      return String(Math.floor(Date.now() / 1000));
    case 'unix_time_millis':
      need(0);
      return String(Date.now());
    case 'timestamp':
      need(1);
      return formatGoTime(asString(args[0]), new Date());
    case 'uuid':
      need(0);
      return randomUUID();
    case 'printf':
      if (args.length < 1) fail('printf needs a format');
      return printf(asString(args[0]), args.slice(1));
    default:
      return fail(`function "${name}" not defined`);
  }
}

function evaluate(node: Node, data: UsernameTemplateData): unknown {
  switch (node.kind) {
    case 'field': {
      if (!Object.prototype.hasOwnProperty.call(data, node.name)) return fail(`no field .${node.name}`);
      return data[node.name as keyof UsernameTemplateData];
    }
    case 'string':
    case 'number':
      return node.value;
    case 'ident':
      return call(node.name, []);
    case 'pipeline': {
      let piped: unknown[] = [];
      for (const cmd of node.commands) {
        const [head, ...rest] = cmd as [Node, ...Node[]];
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
}

/** Renders a username template; a bad template is a 400 naming username_template. */
export function renderUsernameTemplate(template: string, data: UsernameTemplateData): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{{', i);
    if (open < 0) {
      out += template.slice(i);
      break;
    }
    const close = template.indexOf('}}', open + 2);
    if (close < 0) fail('unclosed action');
    let text = template.slice(i, open);
    let body = template.slice(open + 2, close);
    // Go's trim markers: "{{- " eats the whitespace before, " -}}" after.
    if (body.startsWith('- ')) {
      text = text.trimEnd();
      body = body.slice(2);
    }
    let next = close + 2;
    if (body.endsWith(' -')) {
      body = body.slice(0, -2);
      while (next < template.length && /\s/.test(template[next] as string)) next++;
    }
    out += text;
    const tokens = tokenize(body);
    const pos = { i: 0 };
    const v = evaluate(parsePipeline(tokens, pos, null), data);
    out += asString(v);
    i = next;
  }
  return out;
}

/** Checks a template once (at Initialize), so a typo is a 400 on the config, not on the first creds request. */
export function validateUsernameTemplate(template: string): void {
  renderUsernameTemplate(template, { DisplayName: 'display', RoleName: 'role' });
}
