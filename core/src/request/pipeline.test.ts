import type { Backend, LogicalRequest, LogicalResponse } from '@strongroom/sdk-plugin/host';
import type { AuditEntry } from '../audit/broker.js';
import { createNullLogger } from '../log/logger.js';
import { createMetrics } from '../metrics/metrics.js';
import { createRouter, newMountEntry } from '../mounts/mount-table.js';
import { createNamespaceRegistry } from '../namespace/namespaces.js';
import type { ApiRequest } from '../http/types.js';
import type { TokenEntry } from '../token/index.js';
import { createPipeline } from './pipeline.js';
import type { MountBinding } from '../mounts/mount-manager.js';
import { compileSpecialPaths } from '../mounts/special-paths.js';
import type { AclOperation, CallerToken } from './ports.js';

/** A backend that records what reached it and answers from a per-path script. */
function recordingBackend(answer: (req: LogicalRequest) => LogicalResponse | null = () => ({ data: { ok: true } })) {
  const calls: { kind: 'handle' | 'exists'; op: string; path: string; resolve?: true }[] = [];
  const backend: Backend = {
    async handleRequest(req) {
      calls.push({ kind: 'handle', op: req.operation, path: req.path, ...(req.resolveExistence ? { resolve: true as const } : {}) });
      return answer(req);
    },
    async existenceCheck(req) {
      calls.push({ kind: 'exists', op: req.operation, path: req.path });
      return { checkFound: true, exists: req.path.endsWith('present') };
    },
    specialPaths: () => ({ unauthenticated: ['login'], root: [] }),
    describe: () => ({ paths: [] }) as never,
    async invalidateKey() {},
    async periodic() {},
    async cleanup() {},
  } as Backend;
  return { backend, calls };
}

function token(over: Partial<CallerToken> = {}): CallerToken {
  return {
    id: 'tok',
    accessor: 'acc',
    policies: ['p'],
    displayName: 'token',
    entityId: '',
    metadata: {},
    namespaceId: 'root',
    type: 'service',
    ttl: 3600,
    numUses: 0,
    boundCidrs: [],
    key: 'k',
    isRoot: false,
    entry: {} as TokenEntry,
    ...over,
  };
}

function setup(opts: { token?: CallerToken | null; allow?: AclOperation[]; answer?: (req: LogicalRequest) => LogicalResponse | null; audit?: boolean } = {}) {
  const namespaces = createNamespaceRegistry();
  namespaces.add({ id: 'ns1id', path: 'ns1/', customMetadata: {} });
  namespaces.add({ id: 'ns2id', path: 'ns1/ns2/', customMetadata: {} });
  namespaces.add({ id: 'ns3id', path: 'ns3/', customMetadata: {} });
  const router = createRouter<MountBinding>();
  const { backend, calls } = recordingBackend(opts.answer);
  const holds = { count: 0, closed: false };
  const binding: MountBinding = {
    backend,
    status: 'running',
    unauthenticated: compileSpecialPaths(['login']),
    root: compileSpecialPaths([]),
    ready: Promise.resolve(),
    acquire: () => {
      if (holds.closed) return null;
      holds.count++;
      return () => void holds.count--;
    },
  };
  router.add(newMountEntry('auth', 'approle/', { type: 'approle' }, 'root'), binding);
  router.add(newMountEntry('auth', 'token/', { type: 'token' }, 'root'), binding);
  for (const ns of ['root', 'ns1id', 'ns2id', 'ns3id']) router.add(newMountEntry('mounts', 'engine/', { type: 'transit' }, ns), binding);
  const aclChecks: AclOperation[] = [];
  const aclSeen: string[] = [];
  const used: string[] = [];
  const revoked: string[] = [];
  const audited: AuditEntry[] = [];
  const wrapped: Record<string, unknown>[] = [];
  const auditedResponses: AuditEntry[] = [];
  const found = opts.token === undefined ? token() : opts.token;
  const pipeline = createPipeline({
    namespaces,
    router,
    tokens: {
      lookup: async (id) => (found && id === found.id ? found : null),
      use: async (t) => {
        used.push(t.accessor);
        return { exhausted: t.numUses === 1, entry: t.entry };
      },
      revokeExhausted: async (t) => {
        revoked.push(t.accessor);
      },
      cidrAllowed: () => true,
      createFromAuth: async (auth) => ({ client_token: 'new', policies: auth.policies }),
    },
    acl: {
      check: async (_t, ns, op, path) => {
        aclChecks.push(op);
        aclSeen.push(`${ns.id}:${path}`);
        const allowed = (opts.allow ?? ['create', 'read', 'update', 'patch', 'delete', 'list']).includes(op);
        return { allowed, sudo: false };
      },
    },
    leases: { register: async ({ secret }) => ({ leaseId: 'engine/creds/x/1', ttl: secret.ttl ?? 60, renewable: true }) },
    quotas: { rateLimit: () => null, reserveLease: async () => null, wantsRole: () => false },
    wrapping: {
      parseTtl: (header) => (header === undefined ? null : Number(header)),
      wrap: async (response, o) => {
        wrapped.push(response);
        return { token: 'wrapping-token', accessor: 'wrapping-accessor', ttl: o.ttl, creation_time: '2026-01-01T00:00:00Z', creation_path: o.path, ...(o.wrappedAccessor ? { wrapped_accessor: o.wrappedAccessor } : {}) };
      },
    },
    audit: {
      enabled: opts.audit ?? true,
      logRequest: async (e) => {
        audited.push(e);
      },
      logResponse: async (e) => {
        auditedResponses.push(e);
      },
    },
    logger: createNullLogger(),
    metrics: createMetrics('test'),
  });
  /** An ApiRequest as the listener makes it; `wrapTtl` is sent as the wrap TTL header. */
  const request = (over: Partial<Omit<ApiRequest, 'token'>> & { token?: string | null; wrapTtl?: number }): Promise<{ status: number; body?: unknown }> => {
    const { wrapTtl, token: tok, ...rest } = over;
    const req: ApiRequest = {
      id: 'r1',
      method: 'GET',
      operation: 'read',
      help: false,
      path: 'engine/x',
      urlPath: 'engine/x',
      token: tok === undefined ? 'tok' : (tok ?? undefined),
      data: {},
      url: '/v1/engine/x',
      rawBody: Buffer.alloc(0),
      headers: wrapTtl !== undefined ? { 'x-vault-wrap-ttl': String(wrapTtl) } : {},
      remoteAddress: '127.0.0.1',
      ...rest,
    };
    return pipeline.handle(req, { remoteAddress: req.remoteAddress });
  };
  return { request, calls, aclChecks, aclSeen, used, revoked, audited, holds, wrapped, auditedResponses };
}

describe('request pipeline', () => {
  it('wraps a response asked with a wrap TTL: the caller and the audit log see wrap_info, never the data', async () => {
    const t = setup({ answer: () => ({ data: { password: 's3cret' } }) });
    const reply = (await t.request({ operation: 'read', path: 'engine/creds/x', wrapTtl: 120 })) as { status: number; body: Record<string, any> };
    expect(reply.status).toBe(200);
    expect(reply.body.data).toBeNull();
    expect(reply.body.wrap_info).toMatchObject({ token: 'wrapping-token', ttl: 120, creation_path: 'engine/creds/x' });
    expect(t.wrapped).toHaveLength(1);
    expect((t.wrapped[0] as Record<string, any>).data).toEqual({ password: 's3cret' });
    const logged = t.auditedResponses[0]!;
    expect(logged.response?.data).toBeNull();
    expect(logged.response?.wrap_info?.token).toBe('wrapping-token');
    expect(JSON.stringify(logged.response)).not.toContain('s3cret');
  });

  it('does not wrap an empty answer', async () => {
    const t = setup({ answer: () => null });
    const reply = await t.request({ operation: 'delete', path: 'engine/keys/x', wrapTtl: 120 });
    expect(reply.status).toBe(204);
    expect(t.wrapped).toHaveLength(0);
  });

  it('with an audit device, decides create vs update with the engine existence check before the backend runs', async () => {
    const t = setup();
    await t.request({ operation: 'write', path: 'engine/keys/absent' });
    await t.request({ operation: 'write', path: 'engine/keys/present' });
    expect(t.calls.map((c) => `${c.kind}:${c.op}`)).toEqual(['exists:update', 'handle:create', 'exists:update', 'handle:update']);
    expect(t.audited.map((e) => e.request.operation)).toEqual(['create', 'update']);
    expect(t.aclChecks).toEqual(['create', 'update', 'create', 'update']);
  });

  it('without audit, a write allowed as create and update alike goes in one round trip, the plugin resolving the operation', async () => {
    const t = setup({ audit: false });
    expect((await t.request({ operation: 'write', path: 'engine/keys/absent' })).status).toBe(200);
    expect(t.calls).toEqual([{ kind: 'handle', op: 'update', path: 'keys/absent', resolve: true }]);
  });

  it('the core’s own backends are asked first even without audit (their check is in-process)', async () => {
    const t = setup({ audit: false });
    await t.request({ operation: 'write', path: 'auth/token/roles/x' });
    expect(t.calls.map((c) => `${c.kind}:${c.op}`)).toEqual(['exists:update', 'handle:create']);
  });

  it.each([true, false])('a token allowed only to update cannot create (audit %s)', async (audit) => {
    const t = setup({ allow: ['update'], audit });
    await expect(t.request({ operation: 'write', path: 'engine/keys/absent' })).rejects.toMatchObject({ code: 'permission_denied' });
    expect(t.calls.filter((c) => c.kind === 'handle')).toEqual([]);
    expect((await t.request({ operation: 'write', path: 'engine/keys/present' })).status).toBe(200);
    expect(t.calls.filter((c) => c.kind === 'handle')).toEqual([{ kind: 'handle', op: 'update', path: 'keys/present' }]);
  });

  it.each([true, false])('a token allowed only to create cannot update (audit %s)', async (audit) => {
    const t = setup({ allow: ['create'], audit });
    await expect(t.request({ operation: 'write', path: 'engine/keys/present' })).rejects.toMatchObject({ code: 'permission_denied' });
    expect(t.calls.filter((c) => c.kind === 'handle')).toEqual([]);
    expect((await t.request({ operation: 'write', path: 'engine/keys/absent' })).status).toBe(200);
    expect(t.calls.filter((c) => c.kind === 'handle')).toEqual([{ kind: 'handle', op: 'create', path: 'keys/absent' }]);
  });

  it('a write allowed neither as create nor as update is refused without asking the engine', async () => {
    const t = setup({ allow: ['read'], audit: false });
    await expect(t.request({ operation: 'write', path: 'engine/keys/absent' })).rejects.toMatchObject({ code: 'permission_denied' });
    expect(t.calls).toEqual([]);
  });

  it('an unauthenticated login skips the existence check and the ACL, and stays an update', async () => {
    const t = setup({ token: null, answer: () => ({ auth: { policies: ['default'] } as never }) });
    const reply = await t.request({ operation: 'write', path: 'auth/approle/login', token: null });
    expect(reply.status).toBe(200);
    expect(t.calls).toEqual([{ kind: 'handle', op: 'update', path: 'login' }]);
    expect(t.aclChecks).toEqual([]);
  });

  it('refuses anything else without a token, before reaching the backend', async () => {
    const t = setup({ token: null });
    await expect(t.request({ path: 'engine/x', token: null })).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(t.request({ path: 'engine/x', token: 'unknown' })).rejects.toMatchObject({ code: 'permission_denied' });
    expect(t.calls).toEqual([]);
  });

  it('consumes a use and revokes the token after its last use', async () => {
    const t = setup({ token: token({ numUses: 1 }) });
    expect((await t.request({})).status).toBe(200);
    expect(t.used).toEqual(['acc']);
    expect(t.revoked).toEqual(['acc']);
  });

  it('registers a secret as a lease and answers its id', async () => {
    const t = setup({ answer: () => ({ data: { u: 'x' }, secret: { ttl: 30, renewable: true, internalData: {} } as never }) });
    const reply = await t.request({ path: 'engine/creds/x' });
    expect(reply.body).toMatchObject({ lease_id: 'engine/creds/x/1', lease_duration: 30, renewable: true, data: { u: 'x' } });
  });

  it('answers 404 for an empty list and 204 for a write with nothing to say', async () => {
    const empty = setup({ answer: () => ({ data: { keys: [] } }) });
    expect((await empty.request({ operation: 'list', path: 'engine/keys/' })).status).toBe(404);
    const silent = setup({ answer: () => null });
    expect((await silent.request({ operation: 'write', path: 'engine/keys/present' })).status).toBe(204);
  });

  it('authorises a list against its directory: the trailing slash is added before routing and the ACL', async () => {
    const t = setup({ answer: () => ({ data: { keys: ['a'] } }) });
    expect((await t.request({ operation: 'list', path: 'engine/keys' })).status).toBe(200);
    expect(t.aclSeen).toEqual(['root:engine/keys/']);
    expect(t.calls).toEqual([{ kind: 'handle', op: 'list', path: 'keys/' }]);
  });

  // Finding 10 of issue 11. Namespaces cannot be created through the API yet
  // (issue 16), so this rule is proven here, over the pipeline's fakes.
  describe("a token acts only in its own namespace and below, with its own namespace's policies", () => {
    it('a token of ns1 is refused in the root namespace and in a sibling, before any backend', async () => {
      const t = setup({ token: token({ namespaceId: 'ns1id' }) });
      await expect(t.request({ path: 'engine/x' })).rejects.toMatchObject({ code: 'permission_denied' });
      await expect(t.request({ path: 'ns3/engine/x' })).rejects.toMatchObject({ code: 'permission_denied' });
      expect(t.aclSeen).toEqual([]);
      expect(t.calls).toEqual([]);
    });

    it('below its namespace, the policies of its own namespace decide on the path as its namespace sees it', async () => {
      const t = setup({ token: token({ namespaceId: 'ns1id' }) });
      expect((await t.request({ path: 'ns1/engine/x' })).status).toBe(200);
      expect((await t.request({ path: 'ns1/ns2/engine/x' })).status).toBe(200);
      const root = setup();
      expect((await root.request({ path: 'ns1/ns2/engine/x' })).status).toBe(200);
      expect(t.aclSeen).toEqual(['ns1id:engine/x', 'ns1id:ns2/engine/x']);
      expect(root.aclSeen).toEqual(['root:ns1/ns2/engine/x']);
    });

    it('a token whose namespace is gone is refused', async () => {
      const t = setup({ token: token({ namespaceId: 'deleted' }) });
      await expect(t.request({ path: 'engine/x' })).rejects.toMatchObject({ code: 'permission_denied' });
    });
  });

  it('holds the mount for the whole request, and a mount being disabled takes no new request', async () => {
    const t = setup();
    expect((await t.request({ path: 'engine/x' })).status).toBe(200);
    expect(t.holds.count).toBe(0);
    t.holds.closed = true;
    await expect(t.request({ path: 'engine/x' })).rejects.toMatchObject({ code: 'unsupported_path' });
    expect(t.calls.filter((c) => c.kind === 'handle')).toHaveLength(1);
  });

  it('audits the request before the backend runs', async () => {
    const t = setup();
    await t.request({ path: 'engine/x' });
    expect(t.audited.map((e) => e.request.path)).toEqual(['engine/x']);
  });
});
