/**
 * A parser for the HCL v1 subset that Vault policy, password-policy and server
 * config files use, plus JSON (a top-level `{ ... }` with `"k": v` pairs), so a
 * policy or config may be written in either.
 *
 * Items are separated by new lines, commas, or nothing (`{ a = 1 b = 2 }`).
 *
 * Output is a plain JS value (`HclObject`):
 * - `k = v` (or `k: v`) sets property `k`; a repeated attribute is an error.
 * - A block `name "l1" "l2" { body }` nests by label: `{ name: { l1: { l2: body } } }`.
 *   Labels may be strings or bare identifiers (`listener tcp {}`).
 * - A block whose full key path already holds a block collects into an array:
 *   `rule "charset" {a} rule "charset" {b}` gives `{ rule: { charset: [a, b] } }`.
 * - `k = { ... }` is the same as the label-less block `k { ... }`.
 * `blocksOf()` below flattens either shape (and the JSON list forms) into
 * `{ labels, body }` entries so consumers need not care which one they got.
 *
 * Security: objects are built with own properties only (`__proto__`,
 * `constructor` are ordinary keys here), so hostile input cannot touch
 * prototypes. Nesting is bounded (MAX_HCL_DEPTH), so `a = [[[...` cannot
 * exhaust the stack. Errors are `bad_request` and name line and column.
 */
import { StrongroomError } from '@strongroom/sdk-plugin/host';

export type HclValue = string | number | boolean | null | HclValue[] | HclObject;
export interface HclObject {
  [key: string]: HclValue;
}

export interface HclParseOptions {
  /** Prefixed to error messages, e.g. a file name or "policy \"ops\"". */
  source?: string;
}

/** A syntax error; still a `bad_request` StrongroomError, with the position kept for callers and tests. */
export class HclSyntaxError extends StrongroomError {
  readonly line: number;
  readonly column: number;
  constructor(message: string, line: number, column: number, source?: string) {
    super('bad_request', `${source ? `${source}: ` : ''}parse error at line ${line}, column ${column}: ${message}`);
    this.name = 'HclSyntaxError';
    this.line = line;
    this.column = column;
  }
}

type TokenKind = 'ident' | 'string' | 'heredoc' | 'number' | 'punct' | 'newline' | 'eof';
interface Token {
  kind: TokenKind;
  /** Decoded value for strings/heredocs, raw text for idents/numbers/punct. */
  text: string;
  line: number;
  column: number;
}

/**
 * Deepest nesting of blocks, objects and lists a document may have. Policies,
 * password policies and server configs need a handful of levels; the bound keeps
 * the recursive descent far from the stack's limit (issue 26, finding 8).
 */
export const MAX_HCL_DEPTH = 100;

const PUNCT = new Set(['{', '}', '[', ']', '=', ':', ',']);
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_.\-]/;
const NUMBER = /^-?(?:0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?)/;

function tokenize(text: string, source: string | undefined): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const fail = (message: string, at = i, atLine = line, atLineStart = lineStart): never => {
    throw new HclSyntaxError(message, atLine, at - atLineStart + 1, source);
  };
  const push = (kind: TokenKind, value: string, start: number, startLine = line, startLineStart = lineStart) =>
    tokens.push({ kind, text: value, line: startLine, column: start - startLineStart + 1 });

  while (i < text.length) {
    const c = text[i] as string;
    if (c === '\n') {
      push('newline', '\n', i);
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF') {
      i++;
      continue;
    }
    if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const startLine = line;
      const startLineStart = lineStart;
      const start = i;
      i += 2;
      while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) {
        if (text[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
        i++;
      }
      if (i >= text.length) fail('unterminated block comment', start, startLine, startLineStart);
      i += 2;
      continue;
    }
    if (PUNCT.has(c)) {
      push('punct', c, i);
      i++;
      continue;
    }
    if (c === '"') {
      const start = i;
      i++;
      let out = '';
      for (;;) {
        if (i >= text.length || text[i] === '\n') fail('unterminated string', start);
        const ch = text[i] as string;
        if (ch === '"') break;
        if (ch !== '\\') {
          out += ch;
          i++;
          continue;
        }
        const esc = text[i + 1];
        const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', a: '\x07', v: '\v' };
        if (esc !== undefined && Object.hasOwn(simple, esc)) {
          out += simple[esc];
          i += 2;
        } else if (esc === 'u' || esc === 'U') {
          const width = esc === 'u' ? 4 : 8;
          const hex = text.slice(i + 2, i + 2 + width);
          if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) fail(`invalid \\${esc} escape: expected ${width} hex digits`);
          const cp = parseInt(hex, 16);
          // A JSON surrogate pair arrives as two \u escapes; concatenating the halves yields the right string.
          if (cp > 0x10ffff) fail('invalid unicode escape: code point out of range');
          out += String.fromCodePoint(cp);
          i += 2 + width;
        } else {
          fail(`invalid escape sequence \\${esc ?? ''}`);
        }
      }
      i++;
      push('string', out, start);
      continue;
    }
    if (c === '<' && text[i + 1] === '<') {
      const start = i;
      const startLine = line;
      const startLineStart = lineStart;
      const indented = text[i + 2] === '-';
      const markerMatch = /^[A-Za-z_][A-Za-z0-9_\-]*/.exec(text.slice(i + (indented ? 3 : 2)));
      if (!markerMatch) fail('heredoc: expected an identifier after <<');
      const marker = (markerMatch as RegExpExecArray)[0];
      let j = i + (indented ? 3 : 2) + marker.length;
      while (text[j] === ' ' || text[j] === '\t' || text[j] === '\r') j++;
      if (text[j] !== '\n') fail('heredoc: the marker must end its line', j);
      j++;
      const lines: string[] = [];
      let closed = false;
      let curLine = line + 1;
      while (j <= text.length) {
        const nl = text.indexOf('\n', j);
        const end = nl === -1 ? text.length : nl;
        const raw = text.slice(j, end).replace(/\r$/, '');
        if ((indented ? raw.trim() : raw.trimEnd()) === marker) {
          closed = true;
          i = end;
          line = curLine;
          lineStart = j;
          break;
        }
        lines.push(raw);
        if (nl === -1) break;
        j = nl + 1;
        curLine++;
      }
      if (!closed) fail(`heredoc: no closing ${marker}`, start, startLine, startLineStart);
      let body = lines;
      if (indented) {
        // <<- strips the indentation common to every non-blank line (HCL's documented behaviour).
        const widths = lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)?.[0].length ?? 0);
        const strip = widths.length ? Math.min(...widths) : 0;
        body = lines.map((l) => l.slice(Math.min(strip, /^[ \t]*/.exec(l)?.[0].length ?? 0)));
      }
      push('heredoc', body.length ? `${body.join('\n')}\n` : '', start, startLine, startLineStart);
      continue;
    }
    const num = NUMBER.exec(text.slice(i, i + 64));
    if (num && (c === '-' || c === '.' || /\d/.test(c))) {
      const after = text[i + num[0].length];
      if (after !== undefined && IDENT_PART.test(after) && !/[.\-]/.test(after)) fail(`invalid number ${JSON.stringify(num[0] + after)}`);
      push('number', num[0], i);
      i += num[0].length;
      continue;
    }
    if (IDENT_START.test(c)) {
      const start = i;
      while (i < text.length && IDENT_PART.test(text[i] as string)) i++;
      push('ident', text.slice(start, i), start);
      continue;
    }
    fail(`unexpected character ${JSON.stringify(c)}`);
  }
  push('eof', '', i);
  return tokens;
}

function setOwn(obj: HclObject, key: string, value: HclValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function getOwn(obj: HclObject, key: string): HclValue | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function isObject(v: HclValue | undefined): v is HclObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a value was produced by a block (an object, or an array of objects from repeated blocks). */
const blockValues = new WeakSet<object>();

/** Line of each key of each parsed object, so config errors can name where a key is. */
const keyLines = new WeakMap<object, Map<string, number>>();
/** Line where each block body starts (its key). */
const blockLines = new WeakMap<object, number>();

function recordLine(obj: object, key: string, line: number): void {
  let m = keyLines.get(obj);
  if (!m) keyLines.set(obj, (m = new Map()));
  if (!m.has(key)) m.set(key, line);
}

/** The line of `key` in a parsed object (the first occurrence for repeated blocks), if known. */
export function lineOf(obj: object, key: string): number | undefined {
  return keyLines.get(obj)?.get(key);
}

/** The line of the key that opened a block body, if `body` came from a block. */
export function blockLineOf(body: object): number | undefined {
  return blockLines.get(body);
}

function createParser(tokens: Token[], source: string | undefined) {
  let pos = 0;
  const peek = (offset = 0): Token => tokens[Math.min(pos + offset, tokens.length - 1)] as Token;
  const next = (): Token => tokens[pos++] ?? (tokens[tokens.length - 1] as Token);
  const fail = (tok: Token, message: string): never => {
    throw new HclSyntaxError(message, tok.line, tok.column, source);
  };
  const describe = (tok: Token): string =>
    tok.kind === 'eof' ? 'end of input' : tok.kind === 'newline' ? 'end of line' : tok.kind === 'string' ? `string ${JSON.stringify(tok.text)}` : `"${tok.text}"`;
  const skipNewlines = () => {
    while (peek().kind === 'newline') pos++;
  };
  const isPunct = (tok: Token, p: string) => tok.kind === 'punct' && tok.text === p;
  let depth = 0;
  /** Parses one nested block, object or list opened by `open`, within MAX_HCL_DEPTH. */
  function nested<T>(open: Token, parse: () => T): T {
    if (++depth > MAX_HCL_DEPTH) fail(open, `nesting is deeper than ${MAX_HCL_DEPTH} levels`);
    const value = parse();
    depth--;
    return value;
  }

  function parseKey(): Token {
    const tok = next();
    if (tok.kind !== 'ident' && tok.kind !== 'string') fail(tok, `expected a key, found ${describe(tok)}`);
    return tok;
  }

  /** Items until `}` (when `closing`) or end of input. Separators: newlines and optional commas. */
  function parseBody(closing: boolean): HclObject {
    const obj: HclObject = {};
    for (;;) {
      while (peek().kind === 'newline' || isPunct(peek(), ',')) pos++;
      const tok = peek();
      if (closing && isPunct(tok, '}')) {
        pos++;
        return obj;
      }
      if (tok.kind === 'eof') {
        if (closing) fail(tok, 'unexpected end of input: missing "}"');
        return obj;
      }
      // Like HCL v1, items need no separator: `{ charset = "abc" min-chars = 1 }` is two items.
      parseItem(obj);
    }
  }

  function parseItem(obj: HclObject): void {
    const keyTok = parseKey();
    const labels: Token[] = [];
    for (;;) {
      const tok = peek();
      if (isPunct(tok, '=') || isPunct(tok, ':')) {
        if (labels.length) fail(tok, `unexpected "${tok.text}" after block labels of "${keyTok.text}"`);
        pos++;
        skipNewlines();
        const valueTok = peek();
        const value = parseValue();
        if (Object.hasOwn(obj, keyTok.text)) {
          fail(keyTok, `duplicate key "${keyTok.text}"`);
        }
        if (isObject(value) && valueTok.kind === 'punct') {
          blockValues.add(value);
          blockLines.set(value, keyTok.line);
        }
        recordLine(obj, keyTok.text, keyTok.line);
        setOwn(obj, keyTok.text, value);
        return;
      }
      if (isPunct(tok, '{')) {
        pos++;
        const body = nested(tok, () => parseBody(true));
        blockValues.add(body);
        blockLines.set(body, keyTok.line);
        insertBlock(obj, keyTok, labels, body);
        return;
      }
      if (tok.kind === 'string' || tok.kind === 'ident') {
        labels.push(next());
        continue;
      }
      // HCL allows a block's brace on the next line (`path "auth/*"` newline `{`), as Vault's policy fixtures write it.
      if (tok.kind === 'newline') {
        let ahead = 0;
        while (peek(ahead).kind === 'newline') ahead++;
        if (isPunct(peek(ahead), '{')) {
          pos += ahead;
          continue;
        }
      }
      fail(tok, `expected "=" or "{" after key "${keyTok.text}", found ${describe(tok)}`);
    }
  }

  function insertBlock(obj: HclObject, keyTok: Token, labels: Token[], body: HclObject): void {
    const path = [keyTok, ...labels];
    let container = obj;
    for (let k = 0; k < path.length - 1; k++) {
      const key = (path[k] as Token).text;
      recordLine(container, key, (path[k] as Token).line);
      const existing = getOwn(container, key);
      if (existing === undefined) {
        const created: HclObject = {};
        blockValues.add(created);
        setOwn(container, key, created);
        container = created;
      } else if (isObject(existing) && blockValues.has(existing)) {
        container = existing;
      } else {
        fail(path[k] as Token, `"${key}" is both a block and an attribute`);
      }
    }
    const last = path[path.length - 1] as Token;
    recordLine(container, last.text, last.line);
    const existing = getOwn(container, last.text);
    if (existing === undefined) {
      setOwn(container, last.text, body);
    } else if (Array.isArray(existing) && blockValues.has(existing)) {
      existing.push(body);
    } else if (isObject(existing) && blockValues.has(existing)) {
      const list: HclValue[] = [existing, body];
      blockValues.add(list);
      setOwn(container, last.text, list);
    } else {
      fail(last, `"${last.text}" is both a block and an attribute`);
    }
  }

  function parseValue(): HclValue {
    const tok = next();
    switch (tok.kind) {
      case 'string':
      case 'heredoc':
        return tok.text;
      case 'number': {
        const n = /^-?0[xX]/.test(tok.text) ? (tok.text.startsWith('-') ? -1 : 1) * parseInt(tok.text.replace(/^-?0[xX]/, ''), 16) : Number(tok.text);
        if (!Number.isFinite(n)) fail(tok, `invalid number ${tok.text}`);
        return n;
      }
      case 'ident':
        if (tok.text === 'true') return true;
        if (tok.text === 'false') return false;
        if (tok.text === 'null') return null;
        return fail(tok, `unexpected identifier "${tok.text}" as a value (strings need quotes)`);
      case 'punct':
        if (tok.text === '[') return nested(tok, parseList);
        if (tok.text === '{') return nested(tok, () => parseBody(true));
        return fail(tok, `expected a value, found ${describe(tok)}`);
      default:
        return fail(tok, `expected a value, found ${describe(tok)}`);
    }
  }

  function parseList(): HclValue[] {
    const list: HclValue[] = [];
    for (;;) {
      skipNewlines();
      if (isPunct(peek(), ']')) {
        pos++;
        return list;
      }
      list.push(parseValue());
      skipNewlines();
      const sep = peek();
      if (isPunct(sep, ',')) {
        pos++;
        continue;
      }
      if (isPunct(sep, ']')) continue;
      fail(sep, `expected "," or "]" in a list, found ${describe(sep)}`);
    }
  }

  function parseDocument(): HclObject {
    skipNewlines();
    // JSON documents (and HCL written as one object) are wrapped in braces.
    if (isPunct(peek(), '{')) {
      pos++;
      const obj = parseBody(true);
      skipNewlines();
      const tok = peek();
      if (tok.kind !== 'eof') fail(tok, `unexpected ${describe(tok)} after the closing "}"`);
      return obj;
    }
    return parseBody(false);
  }

  return { parseDocument };
}

/** Parse an HCL (v1 subset) or JSON document into a plain object. Throws `HclSyntaxError` (bad_request). */
export function parseHcl(text: string, opts: HclParseOptions = {}): HclObject {
  return createParser(tokenize(text, opts.source), opts.source).parseDocument();
}

export interface HclBlock {
  labels: string[];
  body: HclObject;
}

/**
 * Flatten the value of a block key (e.g. `parsed.listener`) into entries with
 * exactly `labelCount` labels, accepting every shape HCL and JSON produce:
 * `{tcp: {...}}`, `{tcp: [{...}, {...}]}`, `[{tcp: {...}}, ...]`, and for zero
 * labels `{...}` or `[{...}, ...]`. Returns null when the shape does not fit.
 */
export function blocksOf(value: HclValue | undefined, labelCount: number): HclBlock[] | null {
  if (value === undefined) return [];
  const out: HclBlock[] = [];
  const walk = (v: HclValue, labels: string[]): boolean => {
    if (Array.isArray(v)) return v.every((item) => walk(item, labels));
    if (!isObject(v)) return false;
    if (labels.length === labelCount) {
      out.push({ labels, body: v });
      return true;
    }
    return Object.keys(v).every((k) => walk(v[k] as HclValue, [...labels, k]));
  };
  return walk(value, []) ? out : null;
}
