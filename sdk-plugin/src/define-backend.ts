/**
 * Declarative engines: `defineBackend`, `definePath`, `defineSecret`.
 *
 * An engine declares paths (template pattern, zod fields, operations,
 * existence check, help) and secret types; this module routes, validates and
 * answers help, so no engine hand-writes a router. It runs on the hot path of
 * every request (plugins and the core's own sys/ and token backends), so all
 * compilation happens at definition time and a request costs one regex test
 * per candidate path plus one zod parse.
 *
 * Rules (mirroring Vault's framework, documented in sdk-plugin/README.md):
 * - Routing: first matching path in declaration order; for LIST a path with a
 *   trailing slash is retried without it. No match: unsupportedPath (404).
 *   A match without the operation: unsupportedOperation (405).
 * - create/update: the existence check (when declared) decides which of the
 *   two the core sends; a path declaring only one of them serves both.
 * - Fields: URL captures win over body/query values (with a warning when they
 *   differ); a JSON null is the same as an absent field; unknown fields are ignored with a warning unless the path takes
 *   arbitrary input; a validation failure is a 400 naming the field.
 * - Lists: a LIST handler answers its keys; the SDK sorts and paginates them
 *   by `after`/`limit` and answers 404 for an empty page, as the spec says.
 *   A SCAN handler (every key below the path, relative, at any depth) is paged
 *   the same way; `scanStorage` answers one from a storage prefix in one call.
 */
import { z } from 'zod';
import type { BackendFactory, BackendType, Backend, MountEnv } from './backend.js';
import type { AclRequirement, BackendDescription, FieldDescription, PathDescription } from './describe.js';
import { badRequest, internalError, unsupportedOperation, unsupportedPath, unrecoverable, StrongroomError } from './errors.js';
import { paginate } from './paginate.js';
import { FieldParseError, fieldJsonSchema, fieldMeta, parseInteger } from './fields.js';
import type {
  ClientInfo,
  ExistenceResult,
  LogicalRequest,
  LogicalResponse,
  MountInfo,
  Operation,
  PathOperation,
  RequestAuth,
  SecretRef,
  SpecialPaths,
} from './logical.js';
import { compilePattern, type CompiledPattern, type PatternNode } from './pattern.js';
import { MAX_RECURSIVE_PAGE, type Storage } from './storage.js';
import type { Logger, SystemView } from './system-view.js';
import { helpFor } from './openapi.js';

export type FieldMap = Record<string, z.ZodType>;
export type FieldValues<F extends FieldMap> = z.output<z.ZodObject<F>>;

/** What a handler receives. */
export interface HandlerRequest<D = Record<string, unknown>> {
  /** Validated, typed fields (captures merged in, defaults applied). */
  data: D;
  /** Names of the declared fields the caller actually sent (captures included), to tell "absent" from "default". */
  provided: ReadonlySet<string>;
  /** Raw URL captures of the pattern. */
  captures: Readonly<Record<string, string>>;
  path: string;
  operation: Operation;
  mount: MountInfo;
  client: ClientInfo;
  /** The mount's storage view. */
  storage: Storage;
  system: SystemView;
  logger: Logger;
  /** Set on renew and revoke. */
  secret?: SecretRef;
  /** Set on renew of a login token (the backend's `authRenew`). */
  auth?: RequestAuth;
  /** Pagination of a LIST or SCAN (after: "" and limit: 0 otherwise). */
  list: { after: string; limit: number };
  /** Push user-safe warnings; they are added to the response. */
  warnings: string[];
  /** The logical request as received (raw body/query in `raw.data`). */
  raw: LogicalRequest;
}

/**
 * A handler answers a response, or null/nothing (a read: 404; a write: 204).
 * A LIST handler may answer the keys instead: the SDK sorts and paginates them
 * (`after`/`limit`) and answers 404 when none is left.
 */
export type Handler<D> = (req: HandlerRequest<D>) => Promise<LogicalResponse | readonly string[] | null | void>;
/** Renew, revoke and token renewal answer a response. */
export type SecretHandler = (req: HandlerRequest<Record<string, unknown>>) => Promise<LogicalResponse | null | void>;

export interface OperationSpec<D> {
  summary: string;
  description?: string;
  deprecated?: boolean;
  handler: Handler<D>;
}

export interface PathSpec<F extends FieldMap> {
  /** Template pattern relative to the mount: "keys/:name", "hash{/:algorithm}", "data/*path". */
  pattern: string;
  /** Fields, validated for every operation of the path. Captures not declared here are plain strings in `req.captures`. */
  fields?: F;
  operations: Partial<Record<PathOperation, OperationSpec<FieldValues<F>>>>;
  /** Whether the target exists; lets the core tell `create` from `update` for the ACL. */
  existenceCheck?: (req: HandlerRequest<FieldValues<F>>) => Promise<boolean>;
  /** One line. */
  synopsis: string;
  /** Markdown. */
  description?: string;
  /** The body is free-form (kv v1): no unknown-field warnings; read it from `req.raw.data`. */
  arbitraryInput?: boolean;
  /** Reachable without a token (login-style). */
  unauthenticated?: boolean;
  /**
   * A login path's role for this request, without logging in (Vault's ResolveRoleOperation: the
   * core asks it when a quota names a role of this mount); null when the request names none.
   */
  resolveRole?: (req: HandlerRequest<FieldValues<F>>) => Promise<string | null>;
  /**
   * Per operation, the ACL checks the core makes instead of the one on the request's own path,
   * for an operation that acts on other paths of the mount (kv's move: `update` on
   * `metadata/{path}`, `delete` on `data/{path}`, `create` on `data/{destination}`).
   */
  authorize?: Partial<Record<PathOperation, AclRequirement[]>>;
}

/** A compiled path declaration. */
export interface PathDef {
  readonly spec: PathSpec<FieldMap>;
  readonly pattern: CompiledPattern;
  /** Declared fields plus undeclared captures. */
  readonly fields: FieldMap;
}

interface CompiledPathDef extends PathDef {
  readonly object: z.ZodObject<FieldMap>;
  readonly hasFields: boolean;
}

const LIST_PARAMS = new Set(['after', 'limit']);

export function definePath<F extends FieldMap>(spec: PathSpec<F>): PathDef {
  const pattern = compilePattern(spec.pattern);
  const fields: FieldMap = { ...(spec.fields ?? {}) };
  const inOptionalGroup = optionalCaptures(pattern.nodes);
  for (const name of pattern.params) {
    if (!fields[name]) fields[name] = inOptionalGroup.has(name) ? z.string().optional() : z.string();
  }
  const def: CompiledPathDef = {
    spec: spec as unknown as PathSpec<FieldMap>,
    pattern,
    fields,
    object: z.object(fields),
    hasFields: Object.keys(fields).length > 0,
  };
  return def;
}

function optionalCaptures(nodes: PatternNode[], inGroup = false, out = new Set<string>()): Set<string> {
  for (const n of nodes) {
    if (n.kind === 'group') optionalCaptures(n.nodes, true, out);
    else if ((n.kind === 'param' || n.kind === 'rest') && inGroup) out.add(n.name);
  }
  return out;
}

export interface SecretTypeSpec {
  /** Secret type name; stored with the lease and used to route renew/revoke. */
  type: string;
  /** Seconds; 0 means the mount default. */
  defaultTtl?: number;
  maxTtl?: number;
  /** Omit to refuse renewal ("lease is not renewable"). */
  renew?: SecretHandler;
  revoke: SecretHandler;
}

export interface SecretTypeDef {
  readonly spec: SecretTypeSpec;
  readonly type: string;
  /** A response carrying this secret: the core turns it into a lease. */
  response(
    data: Record<string, unknown>,
    internalData: Record<string, unknown>,
    opts?: { ttl?: number; maxTtl?: number; renewable?: boolean },
  ): LogicalResponse;
}

export function defineSecret(spec: SecretTypeSpec): SecretTypeDef {
  return {
    spec,
    type: spec.type,
    response(data, internalData, opts = {}) {
      return {
        data,
        secret: {
          type: spec.type,
          ttl: opts.ttl ?? spec.defaultTtl ?? 0,
          maxTtl: opts.maxTtl ?? spec.maxTtl ?? 0,
          renewable: opts.renewable ?? spec.renew !== undefined,
          internalData,
        },
      };
    },
  };
}

/** What `setup` returns for one mount. */
export interface BackendDefinition {
  /** Order matters: the first matching path wins, so greedy patterns (`*rest`) go last. */
  paths: PathDef[];
  secrets?: SecretTypeDef[];
  /** Extra special paths (Vault globs); unauthenticated paths are derived from `unauthenticated: true` already. */
  specialPaths?: Partial<SpecialPaths>;
  /**
   * Renewal of a token this auth mount's login issued: re-check that the login
   * still holds (the role exists, ...) and answer `renewedAuth(...)`; throw to
   * refuse. Without it such tokens cannot be renewed, as in Vault.
   */
  authRenew?: SecretHandler;
  /** A storage key changed elsewhere (another node, a replication): drop what is cached for it. */
  invalidate?(key: string): Promise<void> | void;
  periodic?(): Promise<void>;
  cleanup?(): Promise<void>;
}

export interface BackendSpec {
  type: BackendType;
  /** Markdown help for the backend as a whole. */
  help: string;
  /** Per-mount set-up (caches, options such as kv's version). Without it, `paths`/`secrets` are used as they are. */
  setup?(env: MountEnv): Promise<BackendDefinition> | BackendDefinition;
  paths?: PathDef[];
  secrets?: SecretTypeDef[];
  specialPaths?: Partial<SpecialPaths>;
  authRenew?: SecretHandler;
}

/**
 * The answer of an `authRenew` handler: the token keeps its policies and is
 * renewed with these settings (seconds; a ttl or maxTtl of 0 keeps the token's
 * own, a period of 0 makes it non-periodic).
 */
export function renewedAuth(auth: RequestAuth, ttls: { ttl: number; maxTtl: number; period: number }): LogicalResponse {
  return {
    auth: {
      displayName: '',
      policies: [...auth.policies],
      noDefaultPolicy: false,
      metadata: { ...auth.metadata },
      internalData: { ...auth.internalData },
      ttl: ttls.ttl,
      maxTtl: ttls.maxTtl,
      explicitMaxTtl: 0,
      period: ttls.period,
      numUses: 0,
      renewable: true,
      boundCidrs: [],
      tokenType: '',
    },
  };
}

export function defineBackend(spec: BackendSpec): BackendFactory {
  return {
    type: spec.type,
    async create(env) {
      const def: BackendDefinition = spec.setup
        ? await spec.setup(env)
        : { paths: spec.paths ?? [], secrets: spec.secrets ?? [], specialPaths: spec.specialPaths ?? {}, ...(spec.authRenew ? { authRenew: spec.authRenew } : {}) };
      return buildBackend(spec.help, def, env);
    },
  };
}

function buildBackend(help: string, def: BackendDefinition, env: MountEnv): Backend {
  const paths = def.paths as CompiledPathDef[];
  const secrets = new Map<string, SecretTypeDef>();
  for (const s of def.secrets ?? []) secrets.set(s.type, s);
  let description: BackendDescription | null = null;
  const describe = () => (description ??= describeBackend(help, paths, [...secrets.keys()]));

  const special: SpecialPaths = {
    unauthenticated: [...(def.specialPaths?.unauthenticated ?? [])],
    root: [...(def.specialPaths?.root ?? [])],
  };
  for (const p of paths) if (p.spec.unauthenticated) special.unauthenticated.push(...toGlobs(p.pattern));

  function route(path: string, op: Operation): { def: CompiledPathDef; captures: Record<string, string> } | null {
    for (const p of paths) {
      const captures = p.pattern.match(path);
      if (captures) return { def: p, captures };
    }
    if ((op === 'list' || op === 'scan') && path.endsWith('/')) return route(path.slice(0, -1), 'read');
    return null;
  }

  function buildRequest(p: CompiledPathDef, captures: Record<string, string>, req: LogicalRequest): HandlerRequest<Record<string, unknown>> {
    const warnings: string[] = [];
    const input: Record<string, unknown> = {};
    const provided = new Set<string>();
    const unknown: string[] = [];
    const body = req.data ?? {};
    for (const key of Object.keys(body)) {
      // Own properties only: a body key such as "__proto__" or "constructor" is never a declared field.
      if (Object.hasOwn(p.fields, key) && key !== '__proto__') {
        // JSON null means "not set", as an absent key (hvac sends null for every argument it was not given).
        if (body[key] === null) continue;
        input[key] = body[key];
        provided.add(key);
      } else if (!(pages(req.operation) && LIST_PARAMS.has(key))) {
        unknown.push(key);
      }
    }
    for (const [key, value] of Object.entries(captures)) {
      if (Object.hasOwn(input, key) && input[key] !== value) warnings.push(`Value for field "${key}" in the request body was ignored; the URL value is used`);
      input[key] = value;
      provided.add(key);
    }
    if (unknown.length && !p.spec.arbitraryInput) {
      warnings.push(`Endpoint ignored these unrecognized parameters: [${unknown.sort().join(' ')}]`);
    }
    let data: Record<string, unknown> = input;
    if (p.hasFields) {
      const r = p.object.safeParse(input);
      if (!r.success) throw validationError(r.error, input);
      data = r.data;
    }
    const list = { after: '', limit: 0 };
    if (pages(req.operation)) {
      if (body.after !== undefined && body.after !== null) list.after = String(body.after);
      if (body.limit !== undefined && body.limit !== null && body.limit !== '') {
        let limit: number;
        try {
          limit = parseInteger(body.limit);
        } catch (err) {
          throw badRequest(`field "limit": ${err instanceof FieldParseError ? err.message : 'invalid integer'}`);
        }
        if (limit < 0) throw badRequest('field "limit": must not be negative');
        list.limit = limit;
      }
    }
    return handlerRequest(req, { data, provided, captures, list, warnings });
  }

  /**
   * What every handler gets: the parsed part, plus the request's and the mount's context.
   * Each field is named, never `...parsed`: on Node 20, `{ ...parsed, path, ... }` with the nine
   * properties after the spread took about 7 µs and its garbage per request, named ones 0.1 µs
   * (issue 31; each property added after a spread cost about 0.75 µs).
   */
  function handlerRequest(
    req: LogicalRequest,
    parsed: Pick<HandlerRequest<Record<string, unknown>>, 'data' | 'provided' | 'captures' | 'list' | 'warnings'>,
  ): HandlerRequest<Record<string, unknown>> {
    const hreq: HandlerRequest<Record<string, unknown>> = {
      data: parsed.data,
      provided: parsed.provided,
      captures: parsed.captures,
      list: parsed.list,
      warnings: parsed.warnings,
      path: req.path,
      operation: req.operation,
      mount: req.mount ?? env.mount,
      client: req.client,
      storage: env.storage,
      system: env.system,
      logger: env.logger,
      raw: req,
    };
    if (req.secret) hreq.secret = req.secret;
    if (req.auth) hreq.auth = req.auth;
    return hreq;
  }

  function operationFor(p: CompiledPathDef, op: Operation, path: string): OperationSpec<Record<string, unknown>> {
    const ops = p.spec.operations;
    let found: OperationSpec<Record<string, unknown>> | undefined;
    if (op === 'create') found = ops.create ?? ops.update;
    else if (op === 'update') found = ops.update ?? ops.create;
    else if (op !== 'renew' && op !== 'revoke' && op !== 'help' && op !== 'resolve-role') found = ops[op];
    if (!found) throw unsupportedOperation(op, path);
    return found;
  }

  async function secretOperation(req: LogicalRequest): Promise<LogicalResponse | null> {
    const ref = req.secret;
    const s = ref ? secrets.get(ref.secretType) : undefined;
    if (!ref || !s) {
      // Retrying a revocation of a type this engine does not know cannot succeed.
      const msg = `unknown secret type "${ref?.secretType ?? ''}"`;
      throw req.operation === 'revoke' ? unrecoverable(msg) : badRequest(msg);
    }
    const hreq = buildSecretRequest(req);
    if (req.operation === 'renew') {
      if (!s.spec.renew) throw badRequest('lease is not renewable');
      return finish(await s.spec.renew(hreq), hreq.warnings);
    }
    return finish(await s.spec.revoke(hreq), hreq.warnings);
  }

  /** Renew and revoke carry no declared fields: the data goes through as sent. */
  function buildSecretRequest(req: LogicalRequest): HandlerRequest<Record<string, unknown>> {
    const data = req.data ?? {};
    return handlerRequest(req, { data, provided: new Set(Object.keys(data)), captures: {}, list: { after: '', limit: 0 }, warnings: [] });
  }

  async function authRenewOperation(req: LogicalRequest): Promise<LogicalResponse | null> {
    if (!def.authRenew) throw badRequest('this auth method does not support token renewal');
    const hreq = buildSecretRequest(req);
    return finish(await def.authRenew(hreq), hreq.warnings);
  }

  return {
    async handleRequest(req) {
      const op = req.operation;
      if (op === 'renew' && req.auth && !req.secret) return authRenewOperation(req);
      if (op === 'renew' || op === 'revoke') return secretOperation(req);
      if (op === 'help') return { data: { ...helpFor(describe(), req.path) } };
      if (op === 'resolve-role') {
        const found = route(req.path, op);
        if (!found?.def.spec.resolveRole) throw unsupportedOperation(op, req.path);
        return { data: { role: (await found.def.spec.resolveRole(buildRequest(found.def, found.captures, req))) ?? '' } };
      }
      const r = route(req.path, op);
      if (!r) throw unsupportedPath(req.path);
      const handler = operationFor(r.def, op, req.path);
      const hreq = buildRequest(r.def, r.captures, req);
      const res = await handler.handler(hreq);
      if (!isKeys(res)) return finish(res, hreq.warnings);
      if (!pages(op)) throw internalError(`the ${op} handler of ${r.def.spec.pattern} answered a key list`);
      const keys = paginate(res, hreq.list.after, hreq.list.limit);
      return finish(keys.length ? { data: { keys } } : null, hreq.warnings);
    },
    async existenceCheck(req): Promise<ExistenceResult> {
      const r = route(req.path, req.operation);
      const check = r?.def.spec.existenceCheck;
      if (!r || !check) return { checkFound: false, exists: false };
      return { checkFound: true, exists: await check(buildRequest(r.def, r.captures, req)) };
    },
    specialPaths: () => special,
    describe,
    async invalidateKey(key) {
      await def.invalidate?.(key);
    },
    async periodic() {
      await def.periodic?.();
    },
    async cleanup() {
      await def.cleanup?.();
    },
  };
}

const isKeys = (res: unknown): res is readonly string[] => Array.isArray(res);

/** LIST and SCAN answer keys, paged by `after`/`limit`. */
const pages = (op: Operation): boolean => op === 'list' || op === 'scan';

/**
 * A SCAN handler over the storage prefix a request names (kv's tree, transit's keys, an
 * engine's roles): the keys below it at any depth, a page from `after`, in one storage call
 * (Storage.listRecursive), so no engine crawls its tree with `list`.
 */
export function scanStorage(prefix: string): <D>(req: HandlerRequest<D>) => Promise<LogicalResponse | null>;
export function scanStorage<D>(prefixOf: (req: HandlerRequest<D>) => string, storageOf?: (req: HandlerRequest<D>) => Pick<Storage, 'listRecursive'>): Handler<D>;
/** `storageOf`: where to scan when it is not the mount's storage (the core's cubbyhole: the caller's own box). */
export function scanStorage<D>(
  prefixOf: string | ((req: HandlerRequest<D>) => string),
  storageOf: (req: HandlerRequest<D>) => Pick<Storage, 'listRecursive'> = (req) => req.storage,
): Handler<D> {
  return async (req: HandlerRequest<D>) => {
    const prefix = typeof prefixOf === 'string' ? prefixOf : prefixOf(req);
    const storage = storageOf(req);
    const { after, limit } = req.list;
    let keys = await storage.listRecursive(prefix, { after, limit });
    // No limit, or one above the store's page: more pages until it is reached or the keys end.
    for (let page = keys; page.length === MAX_RECURSIVE_PAGE && (limit === 0 || keys.length < limit); ) {
      page = await storage.listRecursive(prefix, { after: page[page.length - 1] as string, limit: limit === 0 ? 0 : limit - keys.length });
      keys = keys.concat(page);
    }
    return keys.length ? { data: { keys } } : null;
  };
}

function finish(res: LogicalResponse | null | void, warnings: string[]): LogicalResponse | null {
  if (!warnings.length) return res ?? null;
  if (!res) return { warnings };
  return { ...res, warnings: [...(res.warnings ?? []), ...warnings] };
}

/** A zod failure on request fields -> one 400 naming every bad field. */
export function validationError(err: z.ZodError, input: Record<string, unknown>): StrongroomError {
  const seen = new Set<string>();
  const messages: string[] = [];
  for (const issue of err.issues) {
    const name = issue.path.map(String).join('.');
    if (seen.has(name)) continue;
    seen.add(name);
    const top = String(issue.path[0] ?? '');
    const missing = issue.path.length === 1 && input[top] === undefined;
    messages.push(`field "${name}": ${missing ? 'missing required field' : issue.message}`);
  }
  const message = messages.join('; ');
  return messages.length > 1 ? badRequest(message, messages) : badRequest(message);
}

/** Vault-style ACL globs for a template: `:x` becomes `+`, `*x` becomes `*`, one glob per optional combination. */
function toGlobs(p: CompiledPattern): string[] {
  return p.expand().map((path) => {
    let out = path;
    for (const name of p.params) out = out.replace(`{${name}}`, name === p.rest ? '*' : '+');
    return out;
  });
}

export function describeBackend(help: string, paths: readonly PathDef[], secretTypes: string[]): BackendDescription {
  return { help, paths: paths.map(describePath), secretTypes };
}

function describePath(p: PathDef): PathDescription {
  const fields: FieldDescription[] = Object.entries(p.fields).map(([name, schema]) => {
    const meta = fieldMeta(schema);
    const fd: FieldDescription = {
      name,
      schema: fieldJsonSchema(schema),
      description: meta.description ?? '',
      required: p.pattern.params.includes(name) ? !optionalCaptures(p.pattern.nodes).has(name) : !schema.safeParse(undefined).success,
    };
    if (meta.sensitive) fd.sensitive = true;
    if (meta.deprecated) fd.deprecated = true;
    if (meta.query) fd.query = true;
    if (p.pattern.params.includes(name)) fd.inPath = true;
    return fd;
  });
  const operations = (Object.entries(p.spec.operations) as [PathOperation, OperationSpec<unknown>][]).map(([operation, o]) => {
    const od: PathDescription['operations'][number] = { operation, summary: o.summary };
    if (o.description) od.description = o.description;
    return od;
  });
  const d: PathDescription = {
    pattern: p.spec.pattern,
    fields,
    operations,
    existenceCheck: p.spec.existenceCheck !== undefined,
    synopsis: p.spec.synopsis,
    description: p.spec.description ?? '',
  };
  if (p.spec.unauthenticated) d.unauthenticated = true;
  if (p.spec.authorize) d.authorize = p.spec.authorize;
  return d;
}
