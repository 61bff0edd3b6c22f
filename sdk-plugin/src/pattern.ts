/**
 * Template path patterns, compiled once: `keys/:name` (one segment),
 * `hash{/:algorithm}` (optional group; groups nest and repeat:
 * `random{/:source}{/:bytes}`), `data/*path` (the rest of the path, slashes
 * included, possibly empty), and literal text. The same parse tree compiles to
 * a RegExp for routing and expands to OpenAPI paths, so no regex is ever
 * parsed back.
 *
 * Rule from the API spec: a `:param` capture never ends in a period (such a
 * path is an unsupported path, 404). `*rest` captures are free-form.
 */

export type PatternNode =
  | { kind: 'literal'; text: string }
  | { kind: 'param'; name: string }
  | { kind: 'rest'; name: string }
  | { kind: 'group'; nodes: PatternNode[] };

export interface CompiledPattern {
  source: string;
  /** Capture names in order of appearance. */
  params: string[];
  /** Name of the `*rest` capture, if any. */
  rest: string | null;
  /** Captures of `path`, or null when it does not match. Optional groups that did not match are absent. */
  match(path: string): Record<string, string> | null;
  /** Every concrete form of the template, `:name`/`*name` written `{name}` (OpenAPI style), most specific last. */
  expand(): string[];
  nodes: PatternNode[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

function parse(source: string): PatternNode[] {
  let i = 0;
  const seen = new Set<string>();
  let restSeen = false;

  function seq(inGroup: boolean): PatternNode[] {
    const nodes: PatternNode[] = [];
    let lit = '';
    const flush = () => {
      if (lit) nodes.push({ kind: 'literal', text: lit });
      lit = '';
    };
    while (i < source.length) {
      const c = source[i] as string;
      if (restSeen && c !== '}') throw new Error(`pattern "${source}": *rest must be last`);
      if (c === '{') {
        flush();
        i++;
        const inner = seq(true);
        if (source[i] !== '}') throw new Error(`pattern "${source}": unclosed {`);
        i++;
        if (inner.length === 0) throw new Error(`pattern "${source}": empty group`);
        nodes.push({ kind: 'group', nodes: inner });
      } else if (c === '}') {
        if (!inGroup) throw new Error(`pattern "${source}": unbalanced }`);
        flush();
        return nodes;
      } else if (c === ':' || c === '*') {
        flush();
        const m = NAME.exec(source.slice(i + 1));
        if (!m) throw new Error(`pattern "${source}": missing name after ${c} at ${i}`);
        const name = m[0];
        if (seen.has(name)) throw new Error(`pattern "${source}": duplicate capture ${name}`);
        seen.add(name);
        i += 1 + name.length;
        if (c === '*') {
          restSeen = true;
          nodes.push({ kind: 'rest', name });
        } else {
          nodes.push({ kind: 'param', name });
        }
      } else {
        lit += c;
        i++;
      }
    }
    if (inGroup) throw new Error(`pattern "${source}": unclosed {`);
    flush();
    return nodes;
  }

  const nodes = seq(false);
  // A `}` at top level stops seq early; anything left means unbalanced braces.
  if (i !== source.length) throw new Error(`pattern "${source}": unbalanced }`);
  return nodes;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function toRegex(nodes: PatternNode[]): string {
  let out = '';
  for (const n of nodes) {
    if (n.kind === 'literal') out += escapeRe(n.text);
    // One non-empty segment whose last character is not a period.
    else if (n.kind === 'param') out += `(?<${n.name}>[^/]*[^/.])`;
    else if (n.kind === 'rest') out += `(?<${n.name}>.*)`;
    else out += `(?:${toRegex(n.nodes)})?`;
  }
  return out;
}

function expandNodes(nodes: PatternNode[]): string[] {
  let acc = [''];
  for (const n of nodes) {
    let options: string[];
    if (n.kind === 'literal') options = [n.text];
    else if (n.kind === 'param' || n.kind === 'rest') options = [`{${n.name}}`];
    else options = ['', ...expandNodes(n.nodes)];
    const next: string[] = [];
    for (const a of acc) for (const o of options) next.push(a + o);
    acc = next;
  }
  return acc;
}

function collect(nodes: PatternNode[], params: string[]): string | null {
  let rest: string | null = null;
  for (const n of nodes) {
    if (n.kind === 'param') params.push(n.name);
    else if (n.kind === 'rest') {
      params.push(n.name);
      rest = n.name;
    } else if (n.kind === 'group') rest = collect(n.nodes, params) ?? rest;
  }
  return rest;
}

/** Compiles a template; throws on a malformed one (at definition time, not per request). */
export function compilePattern(source: string): CompiledPattern {
  const nodes = parse(source);
  const params: string[] = [];
  const rest = collect(nodes, params);
  const re = new RegExp(`^${toRegex(nodes)}$`);
  let expanded: string[] | null = null;
  return {
    source,
    params,
    rest,
    nodes,
    match(path) {
      const m = re.exec(path);
      if (!m) return null;
      const out: Record<string, string> = {};
      if (m.groups) for (const [k, v] of Object.entries(m.groups)) if (v !== undefined) out[k] = v;
      return out;
    },
    expand() {
      expanded ??= [...new Set(expandNodes(nodes))];
      return expanded;
    },
  };
}
