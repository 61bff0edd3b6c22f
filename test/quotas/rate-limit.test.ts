/**
 * Rate-limit quotas through the real binary: a rule of 5 per hour (an interval no load can
 * outlast, so nothing here depends on timing) answers the 6th request 429 with Retry-After, before
 * the engine is asked (the refused kv write leaves no version); X-Ratelimit-* only once the config
 * asks; the most specific rule wins; exempt paths; block_interval; rules per namespace; 400s
 * naming the field; a token needs a policy on sys/quotas like any path (no sudo, as in Vault);
 * refusals reach the audit devices only when the config asks.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir, startDevServer, tokenWithPolicy, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s?.stop();
});

const put = async (path: string, body: unknown) => {
  const r = await s.api('POST', path, body);
  expect([path, r.status, r.text]).toEqual([path, 204, '']);
};

describe('rate-limit quotas', () => {
  it('answer the 6th request past a rate of 5 with 429 and Retry-After, before the engine writes anything', async () => {
    await put('sys/quotas/rate-limit/five', { path: 'secret/data/five', rate: 5, interval: '1h' });
    const statuses: number[] = [];
    for (let i = 1; i <= 5; i++) statuses.push((await s.api('POST', 'secret/data/five', { data: { n: i } })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const sixth = await s.api('POST', 'secret/data/five', { data: { n: 6 } });
    expect(sixth.status).toBe(429);
    expect(sixth.body.errors[0]).toMatch(/rate limit quota exceeded/);
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Headers are off by default.
    expect(sixth.headers.get('x-ratelimit-limit')).toBeNull();
    // The refused write reached no engine: the metadata (another path, not limited) shows 5 versions.
    const meta = await s.api('GET', 'secret/metadata/five');
    expect(meta.body.data.current_version).toBe(5);
    // A path the rule does not name is not limited.
    expect((await s.api('POST', 'secret/data/other', { data: { a: 1 } })).status).toBe(200);
    const read = await s.api('GET', 'sys/quotas/rate-limit/five');
    expect(read.body.data).toMatchObject({ name: 'five', path: 'secret/data/five', type: 'rate-limit', rate: 5, interval: 3600, block_interval: 0, role: '' });
    const metrics = await s.api('GET', 'sys/metrics?format=prometheus');
    expect(metrics.text).toMatch(/strongroom_quota_rate_limit_violation\{name="five",namespace="root"[^}]*\} 1/);
  });

  it('add X-Ratelimit-* headers when the config enables them, on answers and refusals', async () => {
    const cfg = await s.api('GET', 'sys/quotas/config');
    expect(cfg.body.data).toEqual({
      enable_rate_limit_audit_logging: false,
      enable_rate_limit_response_headers: false,
      rate_limit_exempt_paths: ['sys/generate-recovery-token/attempt', 'sys/generate-recovery-token/update', 'sys/generate-root/attempt', 'sys/generate-root/update', 'sys/health', 'sys/seal-status', 'sys/unseal'],
    });
    await put('sys/quotas/config', { enable_rate_limit_response_headers: true });
    await put('sys/quotas/rate-limit/hdr', { path: 'secret/data/hdr', rate: 2, interval: '1h' });
    const first = await s.api('GET', 'secret/data/hdr');
    expect(first.status).toBe(404);
    expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(3000);
    expect(first.headers.get('retry-after')).toBeNull();
    expect((await s.api('GET', 'secret/data/hdr')).headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = await s.api('GET', 'secret/data/hdr');
    expect(refused.status).toBe(429);
    expect([refused.headers.get('x-ratelimit-limit'), refused.headers.get('x-ratelimit-remaining')]).toEqual(['2', '0']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    await put('sys/quotas/config', { enable_rate_limit_response_headers: false });
  });

  it('apply the most specific rule: a path below the mount before the mount', async () => {
    await s.api('POST', 'sys/mounts/kvspec', { type: 'kv', options: { version: '1' } });
    await put('sys/quotas/rate-limit/mount-wide', { path: 'kvspec/', rate: 1000, interval: '1h' });
    await put('sys/quotas/rate-limit/tight', { path: 'kvspec/tight/*', rate: 2, interval: '1h' });
    expect((await s.api('GET', 'kvspec/tight/a')).status).toBe(404);
    expect((await s.api('GET', 'kvspec/tight/b')).status).toBe(404);
    expect((await s.api('GET', 'kvspec/tight/c')).status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await s.api('GET', 'kvspec/loose')).status).toBe(404);
  });

  it('go with their mount when it is disabled, as in Vault', async () => {
    await s.api('POST', 'sys/mounts/kvgone', { type: 'kv', options: { version: '1' } });
    await put('sys/quotas/rate-limit/gone', { path: 'kvgone/', rate: 1, interval: '1h' });
    await put('sys/quotas/lease-count/gone-leases', { path: 'kvgone/x', max_leases: 1 });
    expect((await s.api('DELETE', 'sys/mounts/kvgone')).status).toBe(204);
    expect((await s.api('GET', 'sys/quotas/rate-limit/gone')).status).toBe(404);
    expect((await s.api('GET', 'sys/quotas/lease-count/gone-leases')).status).toBe(404);
    await s.api('POST', 'sys/mounts/kvgone', { type: 'kv', options: { version: '1' } });
    for (let i = 0; i < 3; i++) expect((await s.api('GET', 'kvgone/a')).status).toBe(404);
  });

  it('leave exempt paths alone', async () => {
    await s.api('POST', 'sys/mounts/kvexempt', { type: 'kv', options: { version: '1' } });
    await put('sys/quotas/rate-limit/exempt-mount', { path: 'kvexempt/', rate: 1, interval: '1h' });
    await put('sys/quotas/config', { rate_limit_exempt_paths: ['kvexempt/open', 'kvexempt/pre/*'] });
    for (let i = 0; i < 4; i++) {
      expect((await s.api('GET', 'kvexempt/open')).status).toBe(404);
      expect((await s.api('GET', 'kvexempt/pre/x')).status).toBe(404);
    }
    expect((await s.api('GET', 'kvexempt/closed')).status).toBe(404);
    expect((await s.api('GET', 'kvexempt/closed')).status).toBe(429);
    expect((await s.api('GET', 'sys/quotas/config')).body.data.rate_limit_exempt_paths).toEqual(['kvexempt/open', 'kvexempt/pre/*']);
  });

  it('block a client for block_interval once it goes past the rate', async () => {
    await s.api('POST', 'sys/mounts/kvblock', { type: 'kv', options: { version: '1' } });
    await put('sys/quotas/rate-limit/blocker', { path: 'kvblock/', rate: 1, interval: '1s', block_interval: '2h' });
    expect((await s.api('GET', 'kvblock/x')).status).toBe(404);
    // However long the machine takes from here, the block (2 h) outlasts the interval (1 s).
    let refused = await s.api('GET', 'kvblock/x');
    if (refused.status === 404) refused = await s.api('GET', 'kvblock/x');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3600);
    await new Promise((r) => setTimeout(r, 1100));
    const still = await s.api('GET', 'kvblock/x');
    expect(still.status).toBe(429);
    expect(Number(still.headers.get('retry-after'))).toBeGreaterThan(3600);
  });

  it('keep rules per namespace: a namespace rule reaches that namespace only', async () => {
    expect((await s.api('POST', 'sys/namespaces/tenant')).status).toBe(200);
    const ns = { headers: { 'X-Vault-Namespace': 'tenant' } };
    expect((await s.api('POST', 'sys/mounts/kvt', { type: 'kv', options: { version: '1' } }, ns)).status).toBe(204);
    expect((await s.api('POST', 'sys/mounts/kvt', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    expect((await s.api('POST', 'sys/quotas/rate-limit/tenant-kv', { path: 'kvt/', rate: 1, interval: '1h' }, ns)).status).toBe(204);
    expect((await s.api('LIST', 'sys/quotas/rate-limit', undefined, ns)).body.data.keys).toEqual(['tenant-kv']);
    expect((await s.api('LIST', 'sys/quotas/rate-limit')).body.data.keys).not.toContain('tenant-kv');
    expect((await s.api('GET', 'sys/quotas/rate-limit/tenant-kv', undefined, ns)).body.data.path).toBe('kvt/');
    expect((await s.api('GET', 'kvt/a', undefined, ns)).status).toBe(404);
    expect((await s.api('GET', 'kvt/a', undefined, ns)).status).toBe(429);
    // The root namespace's kvt/ is another mount.
    for (let i = 0; i < 3; i++) expect((await s.api('GET', 'kvt/a')).status).toBe(404);
    // A rule of the root namespace on the namespace itself ("tenant" or "tenant/").
    expect((await s.api('POST', 'sys/quotas/rate-limit/whole-tenant', { path: 'tenant', rate: 1000, interval: '1h' })).status).toBe(204);
    expect((await s.api('POST', 'sys/quotas/rate-limit/whole-tenant-2', { path: 'tenant/', rate: 1000, interval: '1h' })).body.errors[0]).toMatch(/^path: quota "whole-tenant" already applies/);
    expect((await s.api('DELETE', 'sys/quotas/rate-limit/whole-tenant')).status).toBe(204);
    // The config is server-wide: the root namespace's only.
    expect((await s.api('GET', 'sys/quotas/config', undefined, ns)).status).toBe(404);
    expect((await s.api('DELETE', 'sys/quotas/rate-limit/tenant-kv', undefined, ns)).status).toBe(204);
    expect((await s.api('GET', 'kvt/a', undefined, ns)).status).toBe(404);
    expect((await s.api('LIST', 'sys/quotas/rate-limit', undefined, ns)).status).toBe(404);
  });

  it('limit the logins of one role: an approle role by its RoleID, a userpass user by name', async () => {
    await put('sys/auth/approle', { type: 'approle' });
    await put('auth/approle/role/web', { bind_secret_id: false, token_bound_cidrs: '127.0.0.1/32', secret_id_bound_cidrs: '127.0.0.1/32' });
    await put('auth/approle/role/batch', { bind_secret_id: false, token_bound_cidrs: '127.0.0.1/32', secret_id_bound_cidrs: '127.0.0.1/32' });
    const roleId = async (name: string) => (await s.api('GET', `auth/approle/role/${name}/role-id`)).body.data.role_id as string;
    const [web, batch] = [await roleId('web'), await roleId('batch')];
    await put('sys/quotas/rate-limit/web-logins', { path: 'auth/approle/', role: 'web', rate: 2, interval: '1h' });
    expect((await s.api('GET', 'sys/quotas/rate-limit/web-logins')).body.data).toMatchObject({ path: 'auth/approle/', role: 'web' });
    const login = (id: string) => s.api('POST', 'auth/approle/login', { role_id: id }, { token: null });
    expect((await login(web)).status).toBe(200);
    expect((await login(web)).status).toBe(200);
    const refused = await login(web);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    for (let i = 0; i < 4; i++) expect((await login(batch)).status).toBe(200);

    await put('sys/auth/userpass', { type: 'userpass' });
    for (const u of ['bob', 'carol']) await put(`auth/userpass/users/${u}`, { password: `pw-${u}` });
    await put('sys/quotas/rate-limit/bob-logins', { path: 'auth/userpass', role: 'bob', rate: 1, interval: '1h' });
    const up = (u: string) => s.api('POST', `auth/userpass/login/${u}`, { password: `pw-${u}` }, { token: null });
    expect((await up('bob')).status).toBe(200);
    expect((await up('bob')).status).toBe(429);
    expect((await up('carol')).status).toBe(200);
    expect((await up('carol')).status).toBe(200);
    expect((await s.api('POST', 'sys/quotas/rate-limit/token-role', { path: 'auth/token/', role: 'x', rate: 1 })).status).toBe(400);
  });

  it('refuse bad input with a 400 naming the field', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['sys/quotas/rate-limit/bad', { path: 'secret/', rate: -1 }, /rate/],
      ['sys/quotas/rate-limit/bad', { path: 'secret/' }, /^rate/],
      ['sys/quotas/rate-limit/bad', { path: 'secret/', rate: 1, interval: 'soon' }, /interval/],
      ['sys/quotas/rate-limit/bad', { path: 'nowhere/', rate: 1 }, /^path/],
      ['sys/quotas/rate-limit/bad', { path: 'secret/', rate: 1, role: 'r' }, /^role/],
      ['sys/quotas/rate-limit/bad', { path: 'secret/da*ta', rate: 1 }, /^path/],
      ['sys/quotas/rate-limit/dup', { path: 'secret/data/five', rate: 1 }, /^path: quota "five"/],
      ['sys/quotas/lease-count/bad', { path: 'secret/', max_leases: 0 }, /max_leases/],
      ['sys/quotas/lease-count/bad', { path: 'secret/' }, /^max_leases/],
      ['sys/quotas/config', { enable_rate_limit_response_headers: 'maybe' }, /enable_rate_limit_response_headers/],
    ];
    for (const [path, body, message] of cases) {
      const r = await s.api('POST', path, body);
      expect([path, body, r.status]).toEqual([path, body, 400]);
      expect(r.body.errors.join(' ')).toMatch(message);
    }
  });

  it('need a policy on sys/quotas like any path, and no sudo', async () => {
    const none = await tokenWithPolicy(s, 'path "secret/*" { capabilities = ["read"] }');
    expect((await s.api('LIST', 'sys/quotas/rate-limit', undefined, { token: none })).status).toBe(403);
    expect((await s.api('POST', 'sys/quotas/rate-limit/x', { path: 'secret/', rate: 1 }, { token: none })).status).toBe(403);
    const admin = await tokenWithPolicy(s, 'path "sys/quotas/*" { capabilities = ["create", "read", "update", "delete", "list"] }');
    expect((await s.api('POST', 'sys/quotas/rate-limit/by-admin', { path: 'kvspec/other/*', rate: 9 }, { token: admin })).status).toBe(204);
    expect((await s.api('LIST', 'sys/quotas/rate-limit', undefined, { token: admin })).body.data.keys).toContain('by-admin');
    expect((await s.api('GET', 'sys/quotas/config', undefined, { token: admin })).status).toBe(200);
  });

  it('write refusals to the audit devices only when enable_rate_limit_audit_logging is set', async () => {
    const logFile = join(scratchDir('sr-quota-audit-'), 'audit.log');
    await put('sys/audit/file', { type: 'file', options: { file_path: logFile } });
    await s.api('POST', 'sys/mounts/kvaudit', { type: 'kv', options: { version: '1' } });
    await put('sys/quotas/rate-limit/audited', { path: 'kvaudit/', rate: 1, interval: '1h' });
    const refusals = () =>
      (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { type: string; error?: string; request?: { path?: string } })
        .filter((e) => e.type === 'response' && /rate limit quota exceeded/.test(e.error ?? ''));
    expect((await s.api('GET', 'kvaudit/a')).status).toBe(404);
    expect((await s.api('GET', 'kvaudit/a')).status).toBe(429);
    expect(refusals()).toEqual([]);
    await put('sys/quotas/config', { enable_rate_limit_audit_logging: true });
    expect((await s.api('GET', 'kvaudit/b')).status).toBe(429);
    const logged = refusals();
    expect(logged).toHaveLength(1);
    expect(logged[0]!.request?.path).toBe('kvaudit/b');
  });
});
