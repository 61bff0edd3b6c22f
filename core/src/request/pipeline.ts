/**
 * One request's trip through the core (DESIGN.md section 2): namespace and
 * mount resolution -> token lookup -> existence check when create and update
 * differ -> ACL -> audit request -> backend -> lease registration or token
 * creation -> audit response -> envelope.
 *
 * Invariants guarded here: a request without a valid token reaches no backend
 * unless the path is one of the backend's unauthenticated paths; a denied
 * request gets 403 before routing reveals anything; a secret that cannot be
 * leased is never returned.
 */
import { StrongroomError, permissionDenied, type LogicalRequest, type LogicalResponse, type Operation } from '@strongroom/sdk-plugin/host';
import type { CoreLogger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { mountInfoOf, routePath, type RouteMatch, type Router } from '../mounts/mount-table.js';
import { tokenScope, type Namespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { AuditEntry } from '../audit/broker.js';
import { plainRequestKeys } from '../audit/hash.js';
import type { MountBinding } from '../mounts/mount-manager.js';
import type { AclOperation, AclPort, AuditPort, CallerToken, InProcessRequest, LeasePort, TokenPort, WrappingPort } from './ports.js';

export type ApiOperation = 'read' | 'list' | 'write' | 'delete' | 'patch';

export interface PipelineRequest {
  id: string;
  operation: ApiOperation;
  /** Joined namespace + path, relative to /v1/, no leading slash. */
  path: string;
  token: string | null;
  data: Record<string, unknown>;
  remoteAddress: string;
  help: boolean;
  headers: Record<string, string>;
  /** Handed only to the core's in-process backends (sys/, auth/token/), never to a plugin. */
  clientToken?: string | undefined;
  /** Seconds from the wrap TTL header (already validated): the response is wrapped. */
  wrapTtl?: number | undefined;
}

const IN_PROCESS_TYPES = new Set(['system', 'token']);

export interface PipelineReply {
  status: number;
  body?: unknown;
  raw?: { body: Buffer; contentType: string };
  headers?: Record<string, string>;
}

export interface PipelineDeps {
  namespaces: NamespaceRegistry;
  router: Router<MountBinding>;
  tokens: TokenPort;
  acl: AclPort;
  leases: LeasePort;
  audit: AuditPort;
  wrapping: WrappingPort;
  logger: CoreLogger;
  metrics: Metrics;
  /** Renders `?help=1` for a mount. */
  help(binding: MountBinding, mountPath: string, relativePath: string): Record<string, unknown>;
}

const READ_ONLY_DATA: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export function createPipeline(deps: PipelineDeps) {
  const { router, namespaces, tokens, acl, leases, audit, logger } = deps;

  async function handle(req: PipelineRequest): Promise<PipelineReply> {
    const { namespace, path } = namespaces.resolve(listPath(req));
    const found = router.match(namespace.id, path);
    // The request holds its mount until its reply (lease included) is made, so a
    // disable waits for it before cleaning up; a mount being disabled takes no new
    // request: for this one it is already gone.
    const release = found ? found.handle.acquire() : null;
    try {
      return await serve(req, namespace, path, release ? found : null);
    } finally {
      release?.();
    }
  }

  async function serve(req: PipelineRequest, namespace: Namespace, path: string, match: RouteMatch<MountBinding> | null | undefined): Promise<PipelineReply> {
    // Unknown path: authenticate first, so an anonymous caller learns nothing.
    const binding = match?.handle;
    const relativePath = match?.relativePath ?? '';

    const unauthenticated = binding !== undefined && binding.unauthenticated(relativePath);
    let token: CallerToken | null = null;
    if (req.token) {
      token = await tokens.lookup(req.token);
      if (!token && !unauthenticated) throw permissionDenied('permission denied');
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

    if (binding.status !== 'running' || !binding.backend) {
      if (binding.status === 'starting') await binding.ready;
      if (binding.status !== 'running' || !binding.backend) {
        throw new StrongroomError('unavailable', binding.error ?? `mount "${match.mountPath}" is not available (${binding.status})`);
      }
    }
    const backend = binding.backend;
    const mount = match.entry;
    const mountInfo = mountInfoOf(mount, namespace.path);

    const logical: LogicalRequest = {
      id: req.id,
      operation: req.help ? 'help' : toLogicalOp(req.operation),
      path: relativePath,
      mount: mountInfo,
      data: req.data,
      client: {
        remoteAddress: req.remoteAddress,
        displayName: token?.displayName ?? '',
        tokenAccessor: token?.accessor ?? '',
        entityId: token?.entityId ?? '',
        policies: token?.policies ?? [],
        metadata: token?.metadata ?? {},
      },
      headers: req.headers,
    };
    if (IN_PROCESS_TYPES.has(mount.type)) {
      if (req.clientToken) logical.clientToken = req.clientToken;
      if (req.clientToken && token) (logical as InProcessRequest).callerEntry = token.entry;
      if (req.wrapTtl !== undefined) (logical as InProcessRequest).wrapTtl = req.wrapTtl;
    }

    // Writes: the engine's existence check decides between create and update.
    // An unauthenticated path (a login) has no ACL to decide, so, as in Vault,
    // it stays an update and saves the round trip to the plugin.
    if (req.operation === 'write' && !req.help && !unauthenticated) {
      const ex = await backend.existenceCheck(logical);
      logical.operation = ex.checkFound && !ex.exists ? 'create' : 'update';
    }

    let sudo = false;
    if (token && !unauthenticated) {
      const op: AclOperation = req.help ? 'read' : (logical.operation as AclOperation);
      const decision = await authorize(token, op, path, req.data, namespace, req.help);
      sudo = decision.sudo;
      if (binding.root(relativePath) && !sudo) throw permissionDenied('permission denied');
    }

    if (req.help) return { status: 200, body: deps.help(binding, match.mountPath, relativePath) };

    const auditEntry: AuditEntry | null = audit.enabled
      ? {
          auth: token ? auditAuth(token) : null,
          request: {
            id: req.id,
            operation: logical.operation,
            path,
            mount_type: mount.type,
            mount_accessor: mount.accessor,
            namespace: { id: namespace.id, path: namespace.path },
            remote_address: req.remoteAddress,
            client_token: token?.id ?? '',
            client_token_accessor: token?.accessor ?? '',
            data: req.data,
          },
          nonHmacRequestKeys: plainRequestKeys(mount.config.audit_non_hmac_request_keys, binding.description),
          nonHmacResponseKeys: mount.config.audit_non_hmac_response_keys,
        }
      : null;
    if (auditEntry) await audit.logRequest(auditEntry);

    // An unauthenticated path does not spend a use: the token is not what lets
    // the request through (sys/wrapping/lookup must not burn a wrapping token).
    let exhausted = false;
    if (token && !unauthenticated && token.numUses > 0) {
      const used = await tokens.use(token);
      exhausted = used.exhausted;
      // The core's own backends see the token as this request left it (lookup-self shows the uses left).
      if ((logical as InProcessRequest).callerEntry !== undefined) (logical as InProcessRequest).callerEntry = used.entry;
    }

    let resp: LogicalResponse | null;
    try {
      resp = await backend.handleRequest(logical);
    } catch (err) {
      if (auditEntry) await audit.logResponse({ ...auditEntry, error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
      throw err;
    } finally {
      if (exhausted && token) await tokens.revokeExhausted(token).catch((e) => logger.error('failed to revoke exhausted token', { accessor: token!.accessor, error: String(e) }));
    }

    let reply = await render(req, resp, { mount, namespace, path: relativePath, token });
    if (req.wrapTtl !== undefined && !resp?.wrapInfo) reply = await wrapReply(reply, req.wrapTtl, path, namespace.id);
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
  async function wrapReply(reply: PipelineReply, ttl: number, path: string, namespaceId: string): Promise<PipelineReply> {
    const body = reply.body as Record<string, unknown> | undefined;
    if (reply.status !== 200 || reply.raw || !body || typeof body !== 'object' || !('request_id' in body)) return reply;
    const auth = body.auth as { accessor?: unknown } | null | undefined;
    const wrappedAccessor = auth && typeof auth.accessor === 'string' && auth.accessor !== '' ? auth.accessor : undefined;
    const info = await deps.wrapping.wrap(body, { ttl, path, namespaceId, ...(wrappedAccessor ? { wrappedAccessor } : {}) });
    return { status: 200, body: wrappedEnvelope(body.request_id as string, info, body.mount_type) };
  }

  async function authorize(token: CallerToken, op: AclOperation, path: string, data: Record<string, unknown>, namespace: Namespace, anyCapability: boolean) {
    // A token acts only in its own namespace or below it, with its own namespace's policies.
    const scope = tokenScope(namespaces, token.namespaceId, namespace, path);
    if (!scope) throw permissionDenied('permission denied');
    const decision = await acl.check(token, scope.namespace, op, scope.path, data);
    if (!decision.allowed && !anyCapability) throw permissionDenied('permission denied');
    if (!decision.allowed && anyCapability) {
      // help and unknown routes: any non-deny capability on the path is enough.
      for (const alt of ['read', 'list', 'update', 'create', 'delete', 'patch'] as AclOperation[]) {
        if (alt === op) continue;
        if ((await acl.check(token, scope.namespace, alt, scope.path, data)).allowed) return decision;
      }
      throw permissionDenied('permission denied');
    }
    return decision;
  }

  async function render(
    req: PipelineRequest,
    resp: LogicalResponse | null,
    ctx: { mount: import('../mounts/mount-table.js').MountEntry; namespace: import('../namespace/namespaces.js').Namespace; path: string; token: CallerToken | null },
  ): Promise<PipelineReply> {
    // A read that finds nothing is a 404, as in Vault; a write or delete with nothing to say is a 204.
    if (!resp) return req.operation === 'read' || req.operation === 'list' ? { status: 404, body: { errors: [] } } : { status: 204 };
    if (resp.raw) {
      const body = resp.raw.base64 ? Buffer.from(resp.raw.body, 'base64') : Buffer.from(resp.raw.body, 'utf8');
      return { status: resp.raw.status, raw: { body, contentType: resp.raw.contentType } };
    }
    if (resp.redirect) return { status: 307, headers: { location: resp.redirect } };

    let leaseId = '';
    let leaseDuration = 0;
    let renewable = false;
    if (resp.renewedLease) {
      leaseId = resp.renewedLease.leaseId;
      leaseDuration = resp.renewedLease.leaseDuration;
      renewable = resp.renewedLease.renewable;
    } else if (resp.secret) {
      const lease = await leases.register({ mount: ctx.mount, namespace: ctx.namespace, requestPath: `${routePath(ctx.mount)}${ctx.path}`, secret: resp.secret, token: ctx.token });
      leaseId = lease.leaseId;
      leaseDuration = lease.ttl;
      renewable = lease.renewable;
    }
    let auth: Record<string, unknown> | null = resp.renderedAuth ?? null;
    if (resp.auth) {
      auth = await tokens.createFromAuth(resp.auth, { mount: ctx.mount, namespace: ctx.namespace, path: `${routePath(ctx.mount)}${ctx.path}`, remoteAddress: req.remoteAddress });
    }

    if (resp.wrapInfo) return { status: 200, body: wrappedEnvelope(req.id, resp.wrapInfo, ctx.mount.type) };

    const data = resp.data ?? null;
    if (req.operation === 'list' && (!data || !Array.isArray(data.keys) || data.keys.length === 0) && !resp.warnings?.length) {
      // Spec: a list with no results answers 404.
      return { status: 404, body: { errors: [] } };
    }
    if (!data && !auth && !leaseId && !resp.warnings?.length) return { status: 204 };
    return {
      status: resp.status ?? 200,
      body: {
        request_id: req.id,
        lease_id: leaseId,
        renewable,
        lease_duration: leaseDuration,
        data,
        wrap_info: null,
        warnings: resp.warnings?.length ? resp.warnings : null,
        auth,
        mount_type: ctx.mount.type,
      },
    };
  }

  return { handle };
}

type AuditWrapInfo = NonNullable<import('../audit/broker.js').AuditResponse['wrap_info']>;

/** The envelope of a wrapped response: wrap_info and nothing of the response itself. */
function wrappedEnvelope(requestId: string, wrapInfo: Record<string, unknown>, mountType: unknown): Record<string, unknown> {
  return {
    request_id: requestId,
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data: null,
    wrap_info: wrapInfo,
    warnings: null,
    auth: null,
    mount_type: mountType,
  };
}

/**
 * A list names a directory: its path gets its trailing slash here, before
 * routing, the ACL check and audit see it (as Vault's HTTP layer does), so
 * `LIST secret/metadata/app` is authorised against `secret/metadata/app/`,
 * the path it actually lists, never against the slash-less leaf.
 */
function listPath(req: PipelineRequest): string {
  return req.operation === 'list' && req.path !== '' && !req.path.endsWith('/') ? `${req.path}/` : req.path;
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
