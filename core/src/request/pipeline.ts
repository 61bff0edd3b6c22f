/**
 * One request's trip through the core (DESIGN.md section 2): namespace and
 * mount resolution -> rate-limit quota -> token lookup -> existence check when create and update
 * differ -> ACL -> audit request -> backend -> lease registration or token
 * creation -> audit response -> envelope. A write that the ACL allows as
 * create and update alike goes to a plugin in one round trip, the plugin
 * running its own existence check (existence.ts).
 *
 * Invariants guarded here: a request without a valid token reaches no backend
 * unless the path is one of the backend's unauthenticated paths; a denied
 * request gets 403 before routing reveals anything; a secret that cannot be
 * leased is never returned.
 */
import { StrongroomError, helpFor, permissionDenied, writeOperation, type Backend, type LogicalRequest, type LogicalResponse, type Operation } from '@strongroom/sdk-plugin/host';
import { envelope, replyForError } from '../http/response.js';
import type { ApiOperation, ApiReply, ApiRequest } from '../http/types.js';
import type { CoreLogger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { mountInfoOf, routePath, type MountEntry, type RouteMatch, type Router } from '../mounts/mount-table.js';
import { tokenScope, type Namespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { AuditEntry } from '../audit/broker.js';
import { plainRequestKeys } from '../audit/hash.js';
import { runningBackend, type MountBinding } from '../mounts/mount-manager.js';
import type { LeaseReservation } from '../quotas/quota-manager.js';
import { planWrite } from './existence.js';
import { declaredChecks } from './declared-acl.js';
import { visibleScan } from './scan.js';
import { invalidWrappingToken, type AclDecision, type AclOperation, type AclPort, type AuditPort, type CallerToken, type InProcessRequest, type InProcessResponse, type LeasePort, type QuotaPort, type TokenPort, type WrappingPort } from './ports.js';

/** What the pipeline knows of a request beyond what the listener parsed. */
export interface RequestContext {
  /** The client's address: a forwarding standby's signed one, else the connection's. */
  remoteAddress: string;
}

/** The request as the pipeline serves it: the listener's, with its context and the wrap TTL header read. */
interface Served {
  api: ApiRequest;
  remoteAddress: string;
  /** Seconds from the wrap TTL header (validated): the response is wrapped. */
  wrapTtl: number | null;
}

const IN_PROCESS_TYPES = new Set(['system', 'token', 'cubbyhole']);

export interface PipelineDeps {
  namespaces: NamespaceRegistry;
  router: Router<MountBinding>;
  tokens: TokenPort;
  acl: AclPort;
  leases: LeasePort;
  quotas: QuotaPort;
  audit: AuditPort;
  wrapping: WrappingPort;
  logger: CoreLogger;
  metrics: Metrics;
}

export type Pipeline = ReturnType<typeof createPipeline>;

const READ_ONLY_DATA: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export function createPipeline(deps: PipelineDeps) {
  const { router, namespaces, tokens, acl, leases, audit, logger } = deps;

  async function handle(api: ApiRequest, ctx: RequestContext): Promise<ApiReply> {
    const req: Served = { api, remoteAddress: ctx.remoteAddress, wrapTtl: deps.wrapping.parseTtl(headerValue(api.headers['x-service-wrap-ttl']) ?? headerValue(api.headers['x-vault-wrap-ttl'])) };
    const { namespace, path } = namespaces.resolve(listPath(api));
    const found = router.match(namespace.id, path);
    // A mount still starting (just after unseal) knows its unauthenticated paths and login roles only once its plugin has described itself: wait for it rather than refuse a login or miss its role's quota.
    if (found?.handle.status === 'starting') await found.handle.ready;
    // Rate-limit quotas come first: a refused request costs no token lookup and no plugin work.
    const role = found && found.entry.table === 'auth' && deps.quotas.wantsRole(namespace.id, found.mountPath) ? await loginRole(req, namespace, found) : undefined;
    const limit = deps.quotas.rateLimit({ namespaceId: namespace.id, mountPath: found?.mountPath ?? '', path: found?.relativePath ?? path, nsPath: path, client: ctx.remoteAddress, ...(role ? { role } : {}) });
    if (limit && !limit.allowed) return rateLimited(req, namespace, path, found, limit);
    // The request holds its mount until its reply (lease included) is made, so a
    // disable waits for it before cleaning up; a mount being disabled takes no new
    // request: for this one it is already gone.
    const release = found ? found.handle.acquire() : null;
    try {
      const reply = await serve(req, namespace, path, release ? found : null, role);
      return limit && hasKeys(limit.headers) ? { ...reply, headers: { ...reply.headers, ...limit.headers } } : reply;
    } catch (err) {
      // With X-Ratelimit-* headers on, an error answer carries them too.
      if (!limit || !hasKeys(limit.headers)) throw err;
      const reply = replyForError(err, logger, api.id);
      return { ...reply, headers: { ...reply.headers, ...limit.headers } };
    } finally {
      release?.();
    }
  }

  /**
   * The role a login names, asked of its auth method (Vault's ResolveRoleOperation) only when a
   * quota names a role of that mount; none when the method has no roles or cannot tell.
   */
  async function loginRole(req: Served, namespace: Namespace, found: RouteMatch<MountBinding>): Promise<string | undefined> {
    const backend = found.handle.status === 'running' ? found.handle.backend : undefined;
    if (!backend || req.api.operation !== 'write') return undefined;
    const resolve: LogicalRequest = {
      id: req.api.id,
      operation: 'resolve-role',
      path: found.relativePath,
      mount: mountInfoOf(found.entry, namespace.path),
      data: req.api.data,
      client: { remoteAddress: req.remoteAddress, displayName: '', tokenAccessor: '', entityId: '', policies: [], metadata: {} },
      headers: NO_HEADERS,
    };
    const answer = await backend.handleRequest(resolve).catch(() => null);
    const role = answer?.data?.role;
    return typeof role === 'string' && role !== '' ? role : undefined;
  }

  /** The 429 of a request past its rate-limit quota (Retry-After always), audited when the quota config asks. */
  async function rateLimited(req: Served, namespace: Namespace, path: string, found: RouteMatch<MountBinding> | undefined, limit: NonNullable<ReturnType<QuotaPort['rateLimit']>>): Promise<ApiReply> {
    const message = `request path "${path}": rate limit quota exceeded`;
    if (limit.audit && audit.enabled) {
      const entry: AuditEntry = {
        auth: null,
        request: { id: req.api.id, operation: toLogicalOp(req.api.operation), path, mount_type: found?.entry.type ?? '', mount_accessor: found?.entry.accessor ?? '', namespace: { id: namespace.id, path: namespace.path }, remote_address: req.remoteAddress, client_token: '', client_token_accessor: '', data: req.api.data },
      };
      await audit.logRequest(entry);
      await audit.logResponse({ ...entry, error: message });
    }
    return { status: 429, body: { errors: [message] }, headers: limit.headers };
  }

  async function serve(req: Served, namespace: Namespace, path: string, match: RouteMatch<MountBinding> | null | undefined, role: string | undefined): Promise<ApiReply> {
    const { api } = req;
    // Unknown path: authenticate first, so an anonymous caller learns nothing.
    const binding = match?.handle;
    const relativePath = match?.relativePath ?? '';

    const unauthenticated = binding !== undefined && (binding.unauthenticated(relativePath) || openMetrics(api, namespace, match));
    let token: CallerToken | null = null;
    if (api.token) {
      token = await tokens.lookup(api.token);
      if (!token && !unauthenticated) {
        // Unwrapping with a spent wrapping token as the request token answers as the body form does (Vault's 400).
        if (match?.entry.type === 'system' && relativePath === 'wrapping/unwrap' && !api.data.token) throw invalidWrappingToken();
        throw permissionDenied('permission denied');
      }
      if (token && token.boundCidrs.length > 0 && !tokens.cidrAllowed(token, req.remoteAddress)) {
        throw permissionDenied('permission denied');
      }
    } else if (!unauthenticated) {
      throw permissionDenied('permission denied');
    }

    if (!match || !binding) {
      // Authenticated but nothing mounted there: a 404 only for those allowed to see it.
      if (token) await authorize(token, 'read', path, READ_ONLY_DATA, namespace, true);
      throw new StrongroomError('unsupported_path', `no handler for route "${path}". route entry not found.`);
    }

    const backend = await runningBackend(binding);
    if (!backend) throw new StrongroomError('unavailable', binding.error ?? `mount "${match.mountPath}" is not available (${binding.status})`);
    const mount = match.entry;

    const logical: LogicalRequest = {
      id: api.id,
      operation: api.help ? 'help' : toLogicalOp(api.operation),
      path: relativePath,
      mount: mountInfoOf(mount, namespace.path),
      data: api.data,
      client: {
        remoteAddress: req.remoteAddress,
        displayName: token?.displayName ?? '',
        tokenAccessor: token?.accessor ?? '',
        entityId: token?.entityId ?? '',
        policies: token?.policies ?? [],
        metadata: token?.metadata ?? {},
        ...(token?.entry.alias ? { alias: token.entry.alias } : {}),
      },
      headers: NO_HEADERS,
    };
    // The token and the caller's entry go only to the core's in-process backends (sys/, auth/token/, cubbyhole/), never to a plugin.
    if (IN_PROCESS_TYPES.has(mount.type)) {
      if (api.token) logical.clientToken = api.token;
      if (api.token && token) (logical as InProcessRequest).callerEntry = token.entry;
      if (req.wrapTtl !== null) (logical as InProcessRequest).wrapTtl = req.wrapTtl;
      if (api.bodyStream) (logical as InProcessRequest).bodyStream = api.bodyStream;
    } else if (api.dataIsBody) {
      // A plugin gets the body's bytes as they came, not `data` serialised again (nothing here changes `data`).
      logical.dataJson = api.rawBody;
    }

    // Writes: the engine's existence check decides between create and update.
    // An unauthenticated path (a login) has no ACL to decide, so, as in Vault,
    // it stays an update and saves the round trip to the plugin.
    let sudo = false;
    if (token && !unauthenticated) {
      let decision: AclDecision;
      // An operation on other paths of the mount (kv's move and copy): the engine's declared checks instead (declared-acl.ts).
      const declared = api.help ? null : declaredChecks(binding.description, relativePath, api.operation === 'write' ? 'update' : (logical.operation as AclOperation), api.data);
      if (declared) {
        if (api.operation === 'write') logical.operation = 'update';
        decision = await authorizeDeclared(token, declared, path.slice(0, path.length - relativePath.length), namespace);
      } else if (api.operation === 'write' && !api.help) {
        // One round trip only for a plugin (the core's own backends answer in-process) and only
        // with no audit device: the request's audit entry names the operation before the backend runs.
        const oneTrip = !IN_PROCESS_TYPES.has(mount.type) && !audit.enabled;
        decision = await authorizeWrite(token, logical, backend, path, api.data, namespace, oneTrip);
      } else {
        const op: AclOperation = api.help ? 'read' : (logical.operation as AclOperation);
        decision = await authorize(token, op, path, api.data, namespace, api.help);
      }
      sudo = decision.sudo;
      if (binding.root(relativePath) && !sudo) throw permissionDenied('permission denied');
      if (sudo && IN_PROCESS_TYPES.has(mount.type)) (logical as InProcessRequest).callerSudo = true;
      if (!api.help) enforceWrappingBounds(decision, req.wrapTtl);
    }

    if (api.help) return { status: 200, body: binding.description ? helpFor(binding.description, relativePath) : { help: '', openapi: {} } };

    const auditEntry: AuditEntry | null = audit.enabled
      ? {
          auth: token ? auditAuth(token) : null,
          request: {
            id: api.id,
            operation: logical.operation,
            path,
            mount_type: mount.type,
            mount_accessor: mount.accessor,
            namespace: { id: namespace.id, path: namespace.path },
            remote_address: req.remoteAddress,
            client_token: token?.id ?? '',
            client_token_accessor: token?.accessor ?? '',
            data: api.data,
          },
          nonHmacRequestKeys: plainRequestKeys(mount.config.audit_non_hmac_request_keys, binding.description),
          nonHmacResponseKeys: mount.config.audit_non_hmac_response_keys,
        }
      : null;
    if (auditEntry) await audit.logRequest(auditEntry);

    // A request that may create a lease (a secret, a token) takes a place under its lease-count
    // quota first, so one past the quota creates nothing; the place is given back unless a lease took it.
    // A response-wrapping token is a lease too, under the same rule as the request's path: it
    // takes its own place, before anything runs, so a wrapped answer never goes past the quota.
    let reservation: LeaseReservation | null = null;
    let wrapReservation: LeaseReservation | null = null;
    if (!api.help && (mayCreateLease(mount.type, logical) || req.wrapTtl !== null)) {
      const quotaReq = { namespaceId: namespace.id, mountPath: match.mountPath, path: relativePath, ...(role ? { role } : {}) };
      try {
        if (mayCreateLease(mount.type, logical)) reservation = await deps.quotas.reserveLease(quotaReq, path);
        if (req.wrapTtl !== null) wrapReservation = await deps.quotas.reserveLease(quotaReq, path);
      } catch (err) {
        reservation?.release();
        if (auditEntry) await audit.logResponse({ ...auditEntry, error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
        throw err;
      }
    }
    // An unauthenticated path does not spend a use: the token is not what lets
    // the request through (sys/wrapping/lookup must not burn a wrapping token).
    let exhausted = false;
    if (token && !unauthenticated && token.numUses > 0) {
      const used = await tokens.use(token).catch((err: unknown) => {
        reservation?.release();
        wrapReservation?.release();
        throw err;
      });
      exhausted = used.exhausted;
      // The core's own backends see the token as this request left it (lookup-self shows the uses left).
      if ((logical as InProcessRequest).callerEntry !== undefined) (logical as InProcessRequest).callerEntry = used.entry;
    }

    let quotaWarning: string | null = null;
    let resp: LogicalResponse | null;
    let reply: ApiReply;
    // sys/wrapping/wrap makes its wrapping token in the backend: it runs in the wrap's place then.
    const runner = reservation ?? wrapReservation;
    try {
      try {
        try {
          resp = runner ? await runner.run(() => backend.handleRequest(logical)) : await backend.handleRequest(logical);
          if (api.operation === 'scan' && token && !unauthenticated) resp = await scanFilter(resp, logical, backend, token, path, namespace);
        } catch (err) {
          if (auditEntry) await audit.logResponse({ ...auditEntry, error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
          throw err;
        } finally {
          if (exhausted && token) await tokens.revokeExhausted(token).catch((e) => logger.error('failed to revoke exhausted token', { accessor: token!.accessor, error: String(e) }));
        }
        const renderCtx = { mount, namespace, path: relativePath, token };
        reply = reservation ? await reservation.run(() => render(req, resp, renderCtx)) : await render(req, resp, renderCtx);
      } finally {
        quotaWarning = reservation?.release() ?? null;
      }
      if (quotaWarning) reply = { ...reply, headers: { ...reply.headers, Warning: `299 strongroom ${JSON.stringify(quotaWarning)}` } };
      if (req.wrapTtl !== null && !resp?.wrapInfo) {
        const ttl = req.wrapTtl;
        reply = wrapReservation ? await wrapReservation.run(() => wrapReply(reply, ttl, path, namespace.id)) : await wrapReply(reply, ttl, path, namespace.id);
      }
    } finally {
      wrapReservation?.release();
    }
    if (auditEntry) {
      const body = (reply.body ?? null) as Record<string, any> | null;
      await audit.logResponse({
        ...auditEntry,
        response: {
          mount_type: mount.type,
          data: (body?.data as Record<string, unknown>) ?? null,
          secret: body?.lease_id ? { lease_id: body.lease_id as string } : null,
          auth: body?.auth ? auditAuthFromBlock(body.auth) : null,
          warnings: (body?.warnings as string[]) ?? null,
          status: reply.status,
          ...(body?.wrap_info ? { wrap_info: body.wrap_info as AuditWrapInfo } : {}),
        },
      });
    }
    return reply;
  }

  /**
   * Response wrapping: a JSON response is stored under a fresh single-use
   * token and the caller gets only `wrap_info`. Empty (204), raw and redirect
   * answers have nothing to wrap and pass unchanged, as in Vault.
   */
  async function wrapReply(reply: ApiReply, ttl: number, path: string, namespaceId: string): Promise<ApiReply> {
    const body = reply.body as Record<string, unknown> | undefined;
    if (reply.status !== 200 || !body || typeof body !== 'object' || !('request_id' in body)) return reply;
    const auth = body.auth as { accessor?: unknown } | null | undefined;
    const wrappedAccessor = auth && typeof auth.accessor === 'string' && auth.accessor !== '' ? auth.accessor : undefined;
    const info = await deps.wrapping.wrap(body, { ttl, path, namespaceId, ...(wrappedAccessor ? { wrappedAccessor } : {}) });
    return { status: 200, body: envelope({ requestId: body.request_id as string, wrapInfo: info, mountType: body.mount_type as string }) };
  }

  /**
   * A write's operation and its authorisation (existence.ts): refused without
   * asking the engine when neither create nor update is allowed; sent as an
   * update for the plugin to resolve when both are allowed alike and `oneTrip`;
   * otherwise the engine's existence check decides first.
   */
  async function authorizeWrite(
    token: CallerToken,
    logical: LogicalRequest,
    backend: Backend,
    path: string,
    data: Record<string, unknown>,
    namespace: Namespace,
    oneTrip: boolean,
  ): Promise<AclDecision> {
    const create = await decide(token, 'create', path, data, namespace);
    const update = await decide(token, 'update', path, data, namespace);
    const plan = planWrite(create, update);
    if (plan.kind === 'deny') throw permissionDenied('permission denied');
    if (plan.kind === 'either' && oneTrip) {
      logical.operation = 'update';
      logical.resolveExistence = true;
      return update;
    }
    logical.operation = writeOperation(await backend.existenceCheck(logical));
    const decision = logical.operation === 'create' ? create : update;
    if (!decision.allowed) throw permissionDenied('permission denied');
    return decision;
  }

  /** A scan's keys thinned to those the caller may read or list (scan.ts), its page filled from the engine's next ones. */
  async function scanFilter(resp: LogicalResponse | null, logical: LogicalRequest, backend: Backend, token: CallerToken, path: string, namespace: Namespace) {
    const scope = tokenScope(namespaces, token.namespaceId, namespace, path);
    if (!scope) throw permissionDenied('permission denied');
    const limit = Number(logical.data.limit ?? 0);
    return visibleScan(resp, {
      limit: Number.isFinite(limit) && limit > 0 ? Math.floor(limit) : 0,
      next: (after) => backend.handleRequest({ ...logical, data: { ...logical.data, after } }),
      visible: (keys) => acl.readable(token, scope.namespace, keys.map((k) => scope.path + k)),
    });
  }

  /** Every declared check must be allowed; paths are relative to the mount at `mountPrefix`. */
  async function authorizeDeclared(token: CallerToken, checks: NonNullable<ReturnType<typeof declaredChecks>>, mountPrefix: string, namespace: Namespace): Promise<AclDecision> {
    for (const c of checks) {
      if (!(await decide(token, c.capability, mountPrefix + c.path, READ_ONLY_DATA, namespace)).allowed) throw permissionDenied('permission denied');
    }
    return { allowed: true, sudo: false };
  }

  /** The ACL's decision on one operation. A token acts only in its own namespace or below it, with its own namespace's policies. */
  async function decide(token: CallerToken, op: AclOperation, path: string, data: Record<string, unknown>, namespace: Namespace): Promise<AclDecision> {
    const scope = tokenScope(namespaces, token.namespaceId, namespace, path);
    if (!scope) throw permissionDenied('permission denied');
    return acl.check(token, scope.namespace, op, scope.path, data);
  }

  async function authorize(token: CallerToken, op: AclOperation, path: string, data: Record<string, unknown>, namespace: Namespace, anyCapability: boolean) {
    const decision = await decide(token, op, path, data, namespace);
    if (!decision.allowed && !anyCapability) throw permissionDenied('permission denied');
    if (!decision.allowed && anyCapability) {
      // help and unknown routes: any non-deny capability on the path is enough.
      for (const alt of ['read', 'list', 'scan', 'update', 'create', 'delete', 'patch'] as AclOperation[]) {
        if (alt === op) continue;
        if ((await decide(token, alt, path, data, namespace)).allowed) return decision;
      }
      throw permissionDenied('permission denied');
    }
    return decision;
  }

  async function render(req: Served, resp: LogicalResponse | null, ctx: { mount: MountEntry; namespace: Namespace; path: string; token: CallerToken | null }): Promise<ApiReply> {
    const { api } = req;
    // A read that finds nothing is a 404, as in Vault; a write or delete with nothing to say is a 204.
    if (!resp) return api.operation === 'read' || api.operation === 'list' || api.operation === 'scan' ? { status: 404, body: { errors: [] } } : { status: 204 };
    if (resp.raw) {
      const raw = resp.raw.base64 ? Buffer.from(resp.raw.body, 'base64') : Buffer.from(resp.raw.body, 'utf8');
      return { status: resp.raw.status, body: { raw, contentType: resp.raw.contentType } };
    }
    if (resp.redirect) return { status: 307, headers: { location: resp.redirect } };
    const stream = (resp as InProcessResponse).stream;
    if (stream) return { status: 200, body: stream };
    const eventStream = (resp as InProcessResponse).eventStream;
    if (eventStream) return { status: 200, eventStream };

    let leaseId = '';
    let leaseDuration = 0;
    let renewable = false;
    if (resp.renewedLease) {
      leaseId = resp.renewedLease.leaseId;
      leaseDuration = resp.renewedLease.leaseDuration;
      renewable = resp.renewedLease.renewable;
    } else if (resp.secret) {
      const lease = await leases.register({ mountPath: routePath(ctx.mount), mountUuid: ctx.mount.uuid, namespaceId: ctx.namespace.id, requestPath: ctx.path, secret: resp.secret, tokenKey: ctx.token?.key ?? '' });
      leaseId = lease.leaseId;
      leaseDuration = lease.ttl;
      renewable = lease.renewable;
    }
    let auth: Record<string, unknown> | null = resp.renderedAuth ?? null;
    if (resp.auth) {
      auth = await tokens.createFromAuth(resp.auth, { mount: ctx.mount, namespace: ctx.namespace, path: `${routePath(ctx.mount)}${ctx.path}`, remoteAddress: req.remoteAddress });
    }

    if (resp.wrapInfo) return { status: 200, body: envelope({ requestId: api.id, wrapInfo: resp.wrapInfo, mountType: ctx.mount.type }) };

    const data = resp.data ?? null;
    if ((api.operation === 'list' || api.operation === 'scan') && (!data || !Array.isArray(data.keys) || data.keys.length === 0) && !resp.warnings?.length) {
      // Spec: a list (or scan) with no results answers 404.
      return { status: 404, body: { errors: [] } };
    }
    if (!data && !auth && !leaseId && !resp.warnings?.length) return { status: 204 };
    return { status: resp.status ?? 200, body: envelope({ requestId: api.id, leaseId, renewable, leaseDuration, data, warnings: resp.warnings ?? null, auth, mountType: ctx.mount.type }) };
  }

  return { handle };
}

/**
 * A policy's `min_wrapping_ttl` and `max_wrapping_ttl` on the path, after the
 * ACL allowed the operation (Vault's rule): with a minimum the response must be
 * wrapped (a minimum is how an operator makes wrapping mandatory), and the wrap
 * TTL asked for must lie within the bounds. Refused as Vault refuses it: as a
 * permission the token's policies do not grant.
 */
function enforceWrappingBounds(decision: AclDecision, wrapTtl: number | null): void {
  const { minWrappingTtl: min, maxWrappingTtl: max } = decision;
  if (min === undefined && max === undefined) return;
  const inBounds = wrapTtl !== null && (min === undefined || wrapTtl >= min) && (max === undefined || wrapTtl <= max) && (min === undefined || max === undefined || min <= max);
  if (!inBounds) throw permissionDenied('permission denied');
}

/**
 * Whether a request may create a lease, so that a lease-count quota must reserve a place for it:
 * reads and writes to a plugin (credentials, logins), and token creation; never the core's
 * sys/ and cubbyhole/, nor the token method's lookups, renewals and revocations (revoking is how
 * a full quota drains).
 */
function mayCreateLease(mountType: string, logical: LogicalRequest): boolean {
  if (logical.operation !== 'read' && logical.operation !== 'create' && logical.operation !== 'update') return false;
  if (mountType === 'token') return logical.path.startsWith('create');
  return !IN_PROCESS_TYPES.has(mountType);
}

const hasKeys = (o: Record<string, string>): boolean => {
  for (const _ in o) return true;
  return false;
};

type AuditWrapInfo = NonNullable<import('../audit/broker.js').AuditResponse['wrap_info']>;

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function headerValue(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/**
 * A list (or scan) names a directory: its path gets its trailing slash here, before
 * routing, the ACL check and audit see it (as Vault's HTTP layer does), so
 * `LIST secret/metadata/app` is authorised against `secret/metadata/app/`,
 * the path it actually lists, never against the slash-less leaf.
 */
function listPath(req: Pick<ApiRequest, 'operation' | 'path'>): string {
  return (req.operation === 'list' || req.operation === 'scan') && req.path !== '' && !req.path.endsWith('/') ? `${req.path}/` : req.path;
}

function toLogicalOp(op: ApiOperation): Operation {
  return op === 'write' ? 'update' : op;
}

function auditAuth(t: CallerToken) {
  return {
    client_token: t.id,
    accessor: t.accessor,
    display_name: t.displayName,
    policies: t.policies,
    token_policies: t.policies,
    metadata: t.metadata,
    entity_id: t.entityId,
    token_type: t.type,
    token_ttl: t.ttl,
  };
}

function auditAuthFromBlock(a: Record<string, any>) {
  return {
    client_token: String(a.client_token ?? ''),
    accessor: String(a.accessor ?? ''),
    display_name: String(a.display_name ?? ''),
    policies: (a.policies as string[]) ?? [],
    token_policies: (a.token_policies as string[]) ?? [],
    metadata: (a.metadata as Record<string, string>) ?? {},
    entity_id: String(a.entity_id ?? ''),
    token_type: String(a.token_type ?? ''),
    token_ttl: Number(a.lease_duration ?? 0),
  };
}

/**
 * A listener with `telemetry { unauthenticated_metrics_access = true }` serves the root
 * namespace's sys/metrics to a caller without a token (Vault's listener option); a caller
 * that sends a token is still checked as usual.
 */
function openMetrics(api: ApiRequest, namespace: Namespace, match: RouteMatch<MountBinding> | null | undefined): boolean {
  return api.unauthenticatedMetricsAccess === true && !api.token && api.operation === 'read' && namespace.id === 'root' && match?.entry.type === 'system' && match.relativePath === 'metrics';
}
