/**
 * OpenAPI 3.1 and `?help=1` from backend descriptions. Pure functions over
 * the JSON that crosses the Describe RPC, so the core can serve help for any
 * plugin without holding its zod schemas. Field schemas are JSON Schema
 * 2020-12, which is what OpenAPI 3.1 uses.
 */
import { HELP_TYPE, type BackendDescription, type FieldDescription, type PathDescription } from './describe.js';
import { compilePattern, type CompiledPattern } from './pattern.js';

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
};

export interface OpenApiOptions {
  title?: string;
  version?: string;
}

const compiled = new Map<string, CompiledPattern>();
function pattern(source: string): CompiledPattern {
  let p = compiled.get(source);
  if (!p) {
    p = compilePattern(source);
    compiled.set(source, p);
  }
  return p;
}

function slug(s: string): string {
  return s.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'root';
}

function schemaOf(fd: FieldDescription): Record<string, unknown> {
  const s: Record<string, unknown> = { ...fd.schema };
  if (fd.description && s.description === undefined) s.description = fd.description;
  if (fd.deprecated) s.deprecated = true;
  if (fd.sensitive) s['x-vault-displayAttrs'] = { sensitive: true };
  return s;
}

function queryParams(pd: PathDescription): Record<string, unknown>[] {
  return pd.fields
    .filter((f) => f.query && !f.inPath)
    .map((f) => ({ name: f.name, in: 'query', description: f.description, schema: f.schema }));
}

/** Adds the path items of one expanded template under `key` (relative or absolute OpenAPI path). */
function addPathItems(
  paths: OpenApiDocument['paths'],
  key: string,
  pd: PathDescription,
  openParams: string[],
  idBase: string,
): void {
  const byName = new Map(pd.fields.map((f) => [f.name, f]));
  const parameters = openParams.map((name) => {
    const fd = byName.get(name);
    return { name, in: 'path', required: true, description: fd?.description ?? '', schema: fd?.schema ?? { type: 'string' } };
  });
  const bodyFields = pd.fields.filter((f) => !f.inPath && !f.query);
  const ops = new Map(pd.operations.map((o) => [o.operation, o]));
  const base = (): Record<string, unknown> => {
    const item: Record<string, unknown> = { description: pd.synopsis };
    if (parameters.length) item.parameters = parameters;
    if (pd.unauthenticated) item['x-vault-unauthenticated'] = true;
    if (pd.existenceCheck) item['x-vault-createSupported'] = true;
    return item;
  };
  const body = (contentType: string) => {
    const properties: Record<string, unknown> = {};
    for (const f of bodyFields) properties[f.name] = schemaOf(f);
    const required = bodyFields.filter((f) => f.required).map((f) => f.name);
    return {
      required: required.length > 0,
      content: { [contentType]: { schema: { type: 'object', properties, ...(required.length ? { required } : {}) } } },
    };
  };

  const item = base();
  let hasOps = false;
  const read = ops.get('read');
  if (read) {
    hasOps = true;
    const q = queryParams(pd);
    item.get = { summary: read.summary, operationId: `read-${idBase}`, ...(q.length ? { parameters: q } : {}), responses: { '200': { description: 'OK' } } };
  }
  const write = ops.get('update') ?? ops.get('create');
  if (write) {
    hasOps = true;
    item.post = {
      summary: write.summary,
      operationId: `write-${idBase}`,
      ...(bodyFields.length ? { requestBody: body('application/json') } : {}),
      responses: { '200': { description: 'OK' }, '204': { description: 'empty body' } },
    };
  }
  const patch = ops.get('patch');
  if (patch) {
    hasOps = true;
    item.patch = {
      summary: patch.summary,
      operationId: `patch-${idBase}`,
      ...(bodyFields.length ? { requestBody: body('application/merge-patch+json') } : {}),
      responses: { '200': { description: 'OK' }, '204': { description: 'empty body' } },
    };
  }
  const del = ops.get('delete');
  if (del) {
    hasOps = true;
    const q = queryParams(pd);
    item.delete = { summary: del.summary, operationId: `delete-${idBase}`, ...(q.length ? { parameters: q } : {}), responses: { '204': { description: 'empty body' } } };
  }
  if (hasOps) paths[key] = { ...(paths[key] ?? {}), ...item };

  const list = ops.get('list');
  if (list) {
    // LIST travels as GET ?list=true on a directory path (trailing slash), as Vault documents it.
    const listKey = key.endsWith('/') ? key : `${key}/`;
    const listItem = base();
    listItem.get = {
      summary: list.summary,
      operationId: `list-${idBase}`,
      parameters: [
        { name: 'list', in: 'query', required: true, description: 'Must be set to `true`', schema: { type: 'string', enum: ['true'] } },
        ...PAGE_PARAMS,
      ],
      responses: { '200': { description: 'OK' } },
    };
    paths[listKey] = { ...(paths[listKey] ?? {}), ...listItem };
  }

  const scan = ops.get('scan');
  if (scan) {
    // SCAN travels as GET ?scan=true, as OpenBao documents it: its own GET on the path without
    // the trailing slash (the LIST has the one with it), or, where a read holds that GET, an
    // optional `scan` parameter of the read's (OpenBao's shape for a path that reads and scans).
    const scanKey = key.replace(/\/$/, '') || key;
    const held = paths[scanKey]?.get as { parameters?: Record<string, unknown>[] } | undefined;
    if (held) {
      held.parameters = [
        ...(held.parameters ?? []),
        { name: 'scan', in: 'query', description: `Return a recursive list if \`true\`: ${scan.summary}`, schema: { type: 'string' } },
        ...PAGE_PARAMS,
      ];
    } else {
      const scanItem = base();
      scanItem.get = {
        summary: scan.summary,
        operationId: `scan-${idBase}`,
        parameters: [{ name: 'scan', in: 'query', required: true, description: 'Must be set to `true`', schema: { type: 'string', enum: ['true'] } }, ...PAGE_PARAMS],
        responses: { '200': { description: 'OK' } },
      };
      paths[scanKey] = { ...(paths[scanKey] ?? {}), ...scanItem };
    }
  }
}

/** LIST's and SCAN's paging parameters. */
const PAGE_PARAMS: readonly Record<string, unknown>[] = [
  { name: 'after', in: 'query', description: 'Entry to start after (need not exist)', schema: { type: 'string' } },
  { name: 'limit', in: 'query', description: 'Maximum number of entries; 0 for all', schema: { type: 'integer' } },
];

const paramNames = (template: string) => [...template.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);

/** One OpenAPI document for several mounts (`prefix` is the mount path, e.g. "secret/"). */
export function toOpenApi(entries: { prefix: string; description: BackendDescription }[], opts: OpenApiOptions = {}): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const { prefix, description } of entries) {
    for (const pd of description.paths) {
      for (const t of pattern(pd.pattern).expand()) {
        const full = `${prefix}${t}`;
        addPathItems(paths, `/${full}`, pd, paramNames(t), slug(full));
      }
    }
  }
  return { openapi: '3.1.0', info: { title: opts.title ?? 'Strongroom', version: opts.version ?? '' }, paths };
}

/**
 * Relates an expanded template to the queried path: null when the template
 * is neither that path nor below it, else the remaining relative path and
 * the params the query already fixed.
 */
function relativize(template: string, query: string, rest: string | null): { rel: string; fixed: Set<string> } | null {
  const t = template === '' ? [] : template.split('/');
  const q = query === '' ? [] : query.replace(/\/$/, '').split('/');
  const fixed = new Set<string>();
  for (let i = 0; i < q.length; i++) {
    const seg = t[i];
    if (seg === undefined) return null;
    const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(seg);
    if (m) {
      fixed.add(m[1] as string);
      // A rest capture swallows the rest of the query; a plain one takes one segment.
      if (m[1] === rest) return { rel: '/', fixed };
      continue;
    }
    if (seg !== q[i]) return null;
  }
  return { rel: `/${t.slice(q.length).join('/')}`, fixed };
}

/** The type a field's help names: what a lenient field means (its HELP_TYPE), else its JSON Schema type. */
function helpType(schema: FieldDescription['schema']): string {
  const meant = schema[HELP_TYPE];
  if (typeof meant === 'string') return meant;
  if (typeof schema.type === 'string') return schema.type;
  return Array.isArray(schema.type) ? schema.type.join('|') : 'any';
}

function fieldLine(f: FieldDescription): string {
  const flags = [helpType(f.schema), f.required ? 'required' : '', f.sensitive ? 'sensitive' : '', f.inPath ? 'path' : ''].filter(Boolean).join(', ');
  return `    ${f.name} (${flags})${f.description ? `\n        ${f.description}` : ''}`;
}

function matchingPath(description: BackendDescription, path: string): PathDescription | undefined {
  const find = (p: string) => description.paths.find((pd) => pattern(pd.pattern).match(p) !== null);
  return find(path) ?? (path.endsWith('/') ? find(path.slice(0, -1)) : undefined);
}

/** `?help=1`: markdown help for `relativePath` (relative to the mount) and an OpenAPI document of it and the paths below it, relative to it. */
export function helpFor(description: BackendDescription, relativePath: string, opts: OpenApiOptions = {}): { help: string; openapi: OpenApiDocument } {
  const pd = matchingPath(description, relativePath);
  let help: string;
  if (pd && relativePath !== '') {
    const parts = [`Request:        ${relativePath}`, `Matching Route: ${pd.pattern}`, '', pd.synopsis];
    if (pd.fields.length) parts.push('', '## PARAMETERS', '', pd.fields.map(fieldLine).join('\n\n'));
    if (pd.description) parts.push('', '## DESCRIPTION', '', pd.description);
    help = parts.join('\n');
  } else {
    const list = description.paths.map((p) => `    ${p.pattern}\n        ${p.synopsis}`).join('\n\n');
    help = `${description.help}\n\n## PATHS\n\nThe following paths are supported by this backend.\n\n${list}`;
  }

  const paths: OpenApiDocument['paths'] = {};
  for (const p of description.paths) {
    const compiledPattern = pattern(p.pattern);
    for (const t of compiledPattern.expand()) {
      const r = relativize(t, relativePath, compiledPattern.rest);
      if (!r) continue;
      const open = paramNames(t).filter((n) => !r.fixed.has(n));
      addPathItems(paths, r.rel, p, open, slug(`${relativePath}${r.rel}`));
    }
  }
  return { help, openapi: { openapi: '3.1.0', info: { title: opts.title ?? 'Strongroom', version: opts.version ?? '' }, paths } };
}
