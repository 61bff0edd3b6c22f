/**
 * A mount described by its own OpenAPI document (`GET <mount>?help=1`, paths
 * relative to the mount): the templates, their operations and their fields,
 * in the shape the generated pages render. Nothing here knows an engine.
 */
import { api } from './client';

export type FieldKind = 'string' | 'boolean' | 'integer' | 'number' | 'array' | 'object' | 'enum' | 'any';

export interface Field {
  name: string;
  kind: FieldKind;
  description: string;
  required: boolean;
  sensitive: boolean;
  deprecated: boolean;
  default?: unknown;
  options?: string[];
}

export interface PathParam {
  name: string;
  description: string;
}

export interface Template {
  /** Relative to the mount, without a leading slash: "keys/{name}", "keys/" (a list). */
  template: string;
  description: string;
  params: PathParam[];
  read?: { summary: string; query: Field[] };
  write?: { summary: string; fields: Field[] };
  patch?: { summary: string };
  delete?: { summary: string };
  list?: { summary: string };
}

export interface MountSpec {
  templates: Template[];
  /** Every field name marked sensitive anywhere in the mount (to mask values read back). */
  sensitive: Set<string>;
}

type Json = Record<string, unknown>;

function kindOf(schema: Json): { kind: FieldKind; options?: string[] } {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) return { kind: 'enum', options: schema.enum as string[] };
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  const anyOf = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]).flatMap((s) => (typeof s.type === 'string' ? [s.type] : [])) : [];
  const all = [...types, ...anyOf];
  // Wire-lenient fields accept strings too: the first type a person means decides the control.
  if (all.includes('boolean')) return { kind: 'boolean' };
  if (all.includes('array')) return { kind: 'array' };
  if (all.includes('object')) return { kind: 'object' };
  if (all.includes('integer')) return { kind: 'integer' };
  if (all.includes('number') && !all.includes('string')) return { kind: 'number' };
  if (all.includes('string') || all.includes('number')) return { kind: 'string' };
  return { kind: 'any' };
}

function fieldOf(name: string, schema: Json, required: boolean): Field {
  const { kind, options } = kindOf(schema);
  const attrs = (schema['x-vault-displayAttrs'] ?? {}) as Json;
  return {
    name,
    kind,
    description: typeof schema.description === 'string' ? schema.description : '',
    required,
    sensitive: attrs.sensitive === true,
    deprecated: schema.deprecated === true,
    ...(schema.default !== undefined ? { default: schema.default } : {}),
    ...(options ? { options } : {}),
  };
}

function bodyFields(op: Json | undefined): Field[] {
  const content = ((op?.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
  const schema = (Object.values(content)[0]?.schema ?? {}) as Json;
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([n, s]) => fieldOf(n, s, required.has(n)));
}

function parseSpec(doc: { paths?: Record<string, Json> }): MountSpec {
  const templates: Template[] = [];
  const sensitive = new Set<string>();
  for (const [key, item] of Object.entries(doc.paths ?? {})) {
    const template = key.replace(/^\//, '');
    const params = ((item.parameters as Json[] | undefined) ?? []).map((p) => ({ name: String(p.name), description: String(p.description ?? '') }));
    const t: Template = { template, description: String(item.description ?? ''), params };
    const get = item.get as Json | undefined;
    const isList = ((get?.parameters as Json[] | undefined) ?? []).some((p) => p.name === 'list');
    if (get && isList) t.list = { summary: String(get.summary ?? '') };
    else if (get) {
      const query = ((get.parameters as Json[] | undefined) ?? []).filter((p) => p.in === 'query').map((p) => fieldOf(String(p.name), (p.schema ?? {}) as Json, false));
      t.read = { summary: String(get.summary ?? ''), query };
    }
    if (item.post) {
      const fields = bodyFields(item.post as Json);
      for (const f of fields) if (f.sensitive) sensitive.add(f.name);
      t.write = { summary: String((item.post as Json).summary ?? ''), fields };
    }
    if (item.patch) t.patch = { summary: String((item.patch as Json).summary ?? '') };
    if (item.delete) t.delete = { summary: String((item.delete as Json).summary ?? '') };
    templates.push(t);
  }
  return { templates, sensitive };
}

const cache = new Map<string, Promise<MountSpec>>();

/** The mount's description (`apiPath` is "transit/" or "auth/approle/"), cached per namespace and mount. */
export function loadSpec(apiPath: string, namespace: string): Promise<MountSpec> {
  const key = `${namespace}|${apiPath}`;
  let p = cache.get(key);
  if (!p) {
    p = api.read<never>(`${apiPath}`, { help: 1 }).then((r) => parseSpec(((r as unknown as { openapi?: { paths?: Record<string, Json> } }).openapi ?? {})));
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return p;
}

/** Forget cached descriptions (after a mount is enabled, tuned or disabled). */
export const forgetSpecs = () => cache.clear();

export interface Match {
  template: Template;
  /** Values of the template's parameters taken from the path. */
  values: Record<string, string>;
}

/**
 * The template a concrete path (relative to the mount) is an instance of:
 * exact segments first, the fewest parameters winning; a last parameter may
 * take several segments (a `*path` capture, as kv's data/{path}).
 */
export function matchPath(spec: MountSpec, path: string, want: 'dir' | 'item'): Match | null {
  const segs = path.replace(/\/$/, '').split('/').filter((s) => s !== '');
  let best: (Match & { score: number }) | null = null;
  for (const t of spec.templates) {
    const isDir = t.template.endsWith('/');
    if ((want === 'dir') !== isDir) continue;
    const tsegs = t.template.replace(/\/$/, '').split('/').filter((s) => s !== '');
    const values: Record<string, string> = {};
    let score = 0;
    let ok = tsegs.length === segs.length || (tsegs.length < segs.length && /^\{.+\}$/.test(tsegs[tsegs.length - 1] ?? ''));
    for (let i = 0; ok && i < tsegs.length; i++) {
      const ts = tsegs[i]!;
      const m = /^\{(.+)\}$/.exec(ts);
      if (m) {
        const last = i === tsegs.length - 1;
        values[m[1]!] = last ? segs.slice(i).join('/') : segs[i]!;
        score += last && segs.length > tsegs.length ? 3 : 1;
      } else if (ts !== segs[i]) ok = false;
    }
    if (ok && (!best || score < best.score)) best = { template: t, values, score };
  }
  return best ? { template: best.template, values: best.values } : null;
}

/** The template with its parameters filled in. */
export const fillTemplate = (template: string, values: Record<string, string>) =>
  template.replace(/\{([^}]+)\}/g, (_, n: string) => values[n] ?? `{${n}}`);

/** Server messages name the fields they are about (`field "ttl": ...`); this maps them to fields. */
export function fieldErrors(messages: string[], names: string[]): { byField: Record<string, string>; rest: string[] } {
  const byField: Record<string, string> = {};
  const rest: string[] = [];
  for (const m of messages.flatMap((x) => x.split(/;\s+(?=field ")/))) {
    const quoted = /field "([^"]+)"/.exec(m)?.[1]?.split('.')[0];
    const named = quoted && names.includes(quoted) ? quoted : names.find((n) => new RegExp(`(^|[^\\w"])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w]|$)`).test(m));
    if (named && byField[named] === undefined) byField[named] = m;
    else rest.push(m);
  }
  return { byField, rest };
}
