import { type LogicalResponse, putJSON, type Storage, StrongroomError } from '@strongroom/sdk-plugin';
import { createFaultyStore, createMemoryStorage, createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createApproleBackend } from './backend.js';

const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);
const approle = (now?: () => Date) =>
  createTestBackend(createApproleBackend(now ? { now } : {}), { mount: { type: 'approle', path: 'approle/' }, client: { remoteAddress: '10.1.2.3' } });
const login = (b: Awaited<ReturnType<typeof approle>>, data: Record<string, unknown>, ip = '10.1.2.3') =>
  b.request({ operation: 'update', path: 'login', data, client: { remoteAddress: ip } });
const creds = async (b: Awaited<ReturnType<typeof approle>>, role: string, body: Record<string, unknown> = {}) => {
  const roleId = (await b.read(`role/${role}/role-id`))?.data?.role_id as string;
  const sid = (await b.write(`role/${role}/secret-id`, body))?.data as { secret_id: string; secret_id_accessor: string };
  return { roleId, ...sid };
};

describe('approle roles', () => {
  it('creates with defaults, reads TTLs as seconds, accepts the policies alias', async () => {
    const b = await approle();
    expect(await b.writeOperation('role/web')).toBe('create');
    await b.write('role/web', { policies: 'a,b', token_ttl: '1h', token_max_ttl: '2h', secret_id_ttl: '10m', period: '30m' });
    expect(await b.writeOperation('role/web')).toBe('update');
    expect((await b.read('role/web'))?.data).toMatchObject({
      bind_secret_id: true, token_policies: ['a', 'b'], policies: ['a', 'b'], token_ttl: 3600, token_max_ttl: 7200,
      secret_id_ttl: 600, token_period: 1800, period: 1800, token_type: 'default',
    });
    expect((await b.list('role'))?.data).toEqual({ keys: ['web'] });
    await b.delete('role/web');
    expect(await b.read('role/web')).toBeNull();
  });

  it('enforces the role rules with a 400 naming the field', async () => {
    const b = await approle();
    expect((await errOf(b.write('role/bad$name', {}))).message).toContain('role_name');
    expect((await errOf(b.write('role/r', { bind_secret_id: false }))).message).toContain('at least one constraint');
    await b.write('role/r', { bind_secret_id: false, secret_id_bound_cidrs: '10.0.0.0/8' });
    expect((await errOf(b.write('role/s', { token_strictly_bind_ip: true, token_bound_cidrs: ['10.0.0.0/8'] }))).message).toContain('token_strictly_bind_ip');
    expect((await errOf(b.write('role/s', { token_bound_cidrs: ['nope'] }))).message).toContain('token_bound_cidrs');
    expect((await errOf(b.write('role/s', { token_type: 'weird' }))).status).toBe(400);
    expect((await errOf(b.write('role/s', { token_ttl: 100, token_max_ttl: 10 }))).message).toContain('token_ttl');
    await b.write('role/s', { local_secret_ids: true });
    expect((await errOf(b.write('role/s', { local_secret_ids: false }))).message).toContain('local_secret_ids');
  });

  it('sets a custom role_id and refuses one already in use', async () => {
    const b = await approle();
    await b.write('role/a', {});
    await b.write('role/b', {});
    expect((await b.write('role/a/role-id', { role_id: 'custom-a' }))?.data).toEqual({ role_id: 'custom-a' });
    expect((await b.read('role/a/role-id'))?.data).toEqual({ role_id: 'custom-a' });
    expect((await errOf(b.write('role/b/role-id', { role_id: 'custom-a' }))).message).toContain('role_id');
  });

  it('serves the single-field endpoints, with delete resetting the default', async () => {
    const b = await approle();
    await b.write('role/r', {});
    await b.write('role/r/token-ttl', { token_ttl: '5m' });
    expect((await b.read('role/r/token-ttl'))?.data).toEqual({ token_ttl: 300 });
    await b.write('role/r/policies', { token_policies: 'x' });
    expect((await b.read('role/r/policies'))?.data).toEqual({ token_policies: ['x'], policies: ['x'] });
    await b.write('role/r/period', { period: 60 });
    expect((await b.read('role/r/period'))?.data).toEqual({ token_period: 60, period: 60 });
    await b.delete('role/r/token-ttl');
    expect((await b.read('role/r/token-ttl'))?.data).toEqual({ token_ttl: 0 });
    // Turning off the only constraint is refused.
    expect((await errOf(b.write('role/r/bind-secret-id', { bind_secret_id: false }))).message).toContain('at least one constraint');
    expect(await b.read('role/missing/token-ttl')).toBeNull();
  });
});

describe('approle secret IDs', () => {
  it('generates, lists accessors, looks up with metadata as an object, destroys', async () => {
    const b = await approle();
    await b.write('role/r', { secret_id_num_uses: 3 });
    const { secret_id, secret_id_accessor } = await creds(b, 'r', { metadata: '{"team":"ops"}' });
    await b.write('role/r/custom-secret-id', { secret_id: 'my-own-secret' });
    expect(((await b.list('role/r/secret-id'))?.data?.keys as string[]).length).toBe(2);
    const look = (await b.write('role/r/secret-id/lookup', { secret_id }))?.data;
    expect(look).toMatchObject({ metadata: { team: 'ops' }, secret_id_accessor, secret_id_num_uses: 3, expiration_time: '0001-01-01T00:00:00Z' });
    expect((await b.write('role/r/secret-id-accessor/lookup', { secret_id_accessor }))?.data).toEqual(look);
    await b.write('role/r/secret-id/destroy', { secret_id });
    expect(await b.write('role/r/secret-id/lookup', { secret_id })).toBeNull();
    await b.write('role/r/secret-id-accessor/destroy', { secret_id_accessor: ((await b.list('role/r/secret-id'))?.data?.keys as string[])[0] });
    expect(await b.list('role/r/secret-id')).toBeNull(); // empty: 404
  });

  it('never stores a SecretID in plain text', async () => {
    const b = await approle();
    await b.write('role/r', {});
    const { secret_id } = await creds(b, 'r');
    await b.write('role/r/custom-secret-id', { secret_id: 'custom-plain-secret' });
    const dump = [...(b.storage as unknown as { dump(): Map<string, Uint8Array> }).dump()];
    for (const [k, v] of dump) {
      for (const s of [secret_id, 'custom-plain-secret']) {
        expect(k).not.toContain(s);
        expect(Buffer.from(v).toString('utf8')).not.toContain(s);
      }
    }
  });

  it('keeps requested limits within the role', async () => {
    const b = await approle();
    await b.write('role/r', { secret_id_num_uses: 5, secret_id_ttl: 60, secret_id_bound_cidrs: '10.0.0.0/8', token_bound_cidrs: '10.0.0.0/16' });
    expect((await errOf(b.write('role/r/secret-id', { num_uses: 6 }))).message).toContain('num_uses');
    expect((await errOf(b.write('role/r/secret-id', { ttl: 120 }))).message).toContain('ttl');
    expect((await errOf(b.write('role/r/secret-id', { cidr_list: '192.168.0.0/24' }))).message).toContain('cidr_list');
    expect((await errOf(b.write('role/r/secret-id', { token_bound_cidrs: '10.0.0.0/8' }))).message).toContain('token_bound_cidrs');
    expect((await errOf(b.write('role/r/secret-id', { metadata: '[1]' }))).message).toContain('metadata');
    expect((await b.write('role/r/secret-id', { num_uses: 2, ttl: 30, cidr_list: '10.1.0.0/16', token_bound_cidrs: '10.0.1.0/24' }))?.data)
      .toMatchObject({ secret_id_num_uses: 2, secret_id_ttl: 30 });
  });
});

describe('approle login', () => {
  it('issues the auth block from the role and the SecretID metadata', async () => {
    const b = await approle();
    // Vault's tokenutil: a batch token can be neither periodic nor use-limited.
    expect((await errOf(b.write('role/r', { token_type: 'batch', token_num_uses: 4 }))).message).toContain('use limit');
    expect((await errOf(b.write('role/r', { token_type: 'batch', token_period: 60 }))).message).toContain('periodic');
    await b.write('role/r', { token_policies: 'p1', token_ttl: 60, token_max_ttl: 120, token_num_uses: 0, token_type: 'batch', token_period: 0 });
    await b.write('role/r', { token_num_uses: 4, token_type: 'service' });
    const { roleId, secret_id } = await creds(b, 'r', { metadata: '{"env":"prod"}' });
    const res = await login(b, { role_id: roleId, secret_id });
    expect(res?.auth).toMatchObject({
      displayName: 'approle', policies: ['p1'], metadata: { role_name: 'r', env: 'prod' }, ttl: 60, maxTtl: 120,
      numUses: 4, renewable: true, boundCidrs: [], tokenType: 'service',
    });
    expect((await errOf(login(b, { role_id: roleId, secret_id: 'wrong' }))).message).toBe('invalid role or secret ID');
    expect((await errOf(login(b, { role_id: 'wrong', secret_id }))).message).toBe('invalid role or secret ID');
    expect((await errOf(login(b, { role_id: roleId }))).message).toContain('secret_id');
  });

  it('renews a login token only while its role exists with the same role_id, with the role\'s current TTLs', async () => {
    const b = await approle();
    await b.write('role/r', { token_policies: 'p1', token_ttl: 60, token_max_ttl: 600 });
    const { roleId, secret_id } = await creds(b, 'r');
    const issued = (await login(b, { role_id: roleId, secret_id }))!;
    await b.write('role/r/token-ttl', { token_ttl: 90 });
    expect((await b.renewAuth(issued))?.auth).toMatchObject({ policies: ['p1'], ttl: 90, maxTtl: 600, period: 0 });
    // Same name, new role: the RoleID differs, so the old token is refused.
    await b.delete('role/r');
    expect((await errOf(b.renewAuth(issued))).message).toBe('role "r" does not exist during renewal');
    await b.write('role/r', { token_policies: 'p1' });
    const refused = await errOf(b.renewAuth(issued));
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('role_id');
  });

  it('checks the client address and binds the token to it when strict', async () => {
    const b = await approle();
    await b.write('role/r', { secret_id_bound_cidrs: '10.0.0.0/8', token_strictly_bind_ip: true });
    const { roleId, secret_id } = await creds(b, 'r', { cidr_list: '10.1.0.0/16' });
    expect((await errOf(login(b, { role_id: roleId, secret_id }, '192.168.1.1'))).status).toBe(400);
    expect((await errOf(login(b, { role_id: roleId, secret_id }, '10.2.0.1'))).message).toContain('secret ID');
    expect((await login(b, { role_id: roleId, secret_id }, '10.1.2.3'))?.auth?.boundCidrs).toEqual(['10.1.2.3/32']);
  });

  it('logs in without a SecretID when the role does not bind one', async () => {
    const b = await approle();
    await b.write('role/r', { bind_secret_id: false, token_bound_cidrs: '10.0.0.0/8' });
    const roleId = (await b.read('role/r/role-id'))?.data?.role_id as string;
    expect((await login(b, { role_id: roleId }))?.auth?.boundCidrs).toEqual(['10.0.0.0/8']);
    expect((await errOf(login(b, { role_id: roleId }, '11.0.0.1'))).status).toBe(400);
  });

  it('spends a SecretID with num_uses 5 exactly 5 times over 20 concurrent logins', async () => {
    const b = await approle();
    await b.write('role/r', {});
    const { roleId, secret_id } = await creds(b, 'r', { num_uses: 5 });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => login(b, { role_id: roleId, secret_id })));
    expect(results.filter((r) => r.status === 'fulfilled' && (r.value as LogicalResponse).auth).length).toBe(5);
    expect(await b.write('role/r/secret-id/lookup', { secret_id })).toBeNull();
  });

  it('refuses an expired SecretID and tidy removes expired ones', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const b = await approle(() => new Date(t));
    await b.write('role/r', {});
    const short = await creds(b, 'r', { ttl: 60 });
    const forever = await creds(b, 'r');
    t += 61_000;
    expect((await errOf(login(b, { role_id: short.roleId, secret_id: short.secret_id }))).message).toBe('invalid role or secret ID');
    await creds(b, 'r', { ttl: 10 });
    t += 11_000;
    const res = await b.write('tidy/secret-id', {});
    expect(res?.warnings?.[0]).toContain('Tidy operation successfully started');
    await new Promise((r) => setTimeout(r, 20));
    expect((await b.list('role/r/secret-id'))?.data).toEqual({ keys: [forever.secret_id_accessor] });
  });

  it('deleting a role removes its SecretIDs', async () => {
    const b = await approle();
    await b.write('role/r', {});
    const { secret_id } = await creds(b, 'r');
    await b.delete('role/r');
    await b.write('role/r', {});
    expect(await b.write('role/r/secret-id/lookup', { secret_id })).toBeNull();
  });
});

describe('approle caches', () => {
  /** A backend over memory storage that records the keys it reads. */
  const counted = async () => {
    const mem = createMemoryStorage();
    const reads: string[] = [];
    const storage: Storage = { ...mem, get: (key) => (reads.push(key), mem.get(key)) };
    const b = await createTestBackend(createApproleBackend(), { storage, mount: { type: 'approle', path: 'approle/' }, client: { remoteAddress: '10.1.2.3' } });
    return { b, reads, mem };
  };

  it('serves a repeated login from memory, but reads a use-limited SecretID from storage every time', async () => {
    const { b, reads } = await counted();
    await b.write('role/r', {});
    const unlimited = await creds(b, 'r');
    const limited = await creds(b, 'r', { num_uses: 3 });
    await login(b, { role_id: unlimited.roleId, secret_id: unlimited.secret_id });
    reads.length = 0;
    await login(b, { role_id: unlimited.roleId, secret_id: unlimited.secret_id });
    expect(reads).toEqual([]);
    await login(b, { role_id: limited.roleId, secret_id: limited.secret_id });
    reads.length = 0;
    await login(b, { role_id: limited.roleId, secret_id: limited.secret_id });
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatch(/^secret_id\/r\//);
    expect((await b.write('role/r/secret-id/lookup', { secret_id: limited.secret_id }))?.data?.secret_id_num_uses).toBe(1);
  });

  it('sees a role update, a role_id change and a role deletion at the next login', async () => {
    const b = await approle();
    await b.write('role/r', { token_policies: 'before' });
    const { roleId, secret_id } = await creds(b, 'r');
    expect((await login(b, { role_id: roleId, secret_id }))?.auth?.policies).toEqual(['before']);
    await b.write('role/r', { token_policies: 'after' });
    expect((await login(b, { role_id: roleId, secret_id }))?.auth?.policies).toEqual(['after']);
    await b.write('role/r/policies', { token_policies: 'field' });
    expect((await login(b, { role_id: roleId, secret_id }))?.auth?.policies).toEqual(['field']);

    await b.write('role/r/role-id', { role_id: 'moved' });
    expect((await errOf(login(b, { role_id: roleId, secret_id }))).message).toBe('invalid role or secret ID');
    expect((await login(b, { role_id: 'moved', secret_id }))?.auth?.internalData).toMatchObject({ role_id: 'moved' });

    await b.delete('role/r');
    expect((await errOf(login(b, { role_id: 'moved', secret_id }))).message).toBe('invalid role or secret ID');
    // Created again under the same name: a new RoleID, and the old SecretID went with the old role.
    await b.write('role/r', {});
    const fresh = (await b.read('role/r/role-id'))?.data?.role_id as string;
    expect((await errOf(login(b, { role_id: fresh, secret_id }))).message).toBe('invalid role or secret ID');
  });

  it('refuses a cached SecretID once destroyed, by value or by accessor', async () => {
    const b = await approle();
    await b.write('role/r', {});
    const one = await creds(b, 'r');
    const two = await creds(b, 'r');
    await login(b, { role_id: one.roleId, secret_id: one.secret_id });
    await login(b, { role_id: two.roleId, secret_id: two.secret_id });
    await b.write('role/r/secret-id/destroy', { secret_id: one.secret_id });
    await b.write('role/r/secret-id-accessor/destroy', { secret_id_accessor: two.secret_id_accessor });
    expect((await errOf(login(b, { role_id: one.roleId, secret_id: one.secret_id }))).message).toBe('invalid role or secret ID');
    expect((await errOf(login(b, { role_id: two.roleId, secret_id: two.secret_id }))).message).toBe('invalid role or secret ID');
  });

  it('drops what the core invalidates after storage changed elsewhere', async () => {
    const { b, mem } = await counted();
    await b.write('role/r', { token_policies: 'cached' });
    const { roleId, secret_id } = await creds(b, 'r');
    await login(b, { role_id: roleId, secret_id });
    const stored = JSON.parse(Buffer.from((await mem.get('role/r'))!).toString('utf8')) as Record<string, unknown>;
    await putJSON(mem, 'role/r', { ...stored, token_policies: ['elsewhere'] });
    expect((await login(b, { role_id: roleId, secret_id }))?.auth?.policies).toEqual(['cached']);
    await b.backend.invalidateKey('role/r');
    expect((await login(b, { role_id: roleId, secret_id }))?.auth?.policies).toEqual(['elsewhere']);

    const [sidKey] = [...mem.dump().keys()].filter((k) => k.startsWith('secret_id/'));
    await mem.delete(sidKey!);
    await b.backend.invalidateKey(sidKey!);
    expect((await errOf(login(b, { role_id: roleId, secret_id }))).message).toBe('invalid role or secret ID');
  });
});

describe('approle writes are atomic', () => {
  it('a RoleID change cut short at the storage (fault injector) leaves the role and its index as they were', async () => {
    const storage = createFaultyStore(createMemoryStorage());
    const b = await createTestBackend(createApproleBackend(), { mount: { path: 'approle/' }, storage });
    await b.write('role/r', { role_id: 'old-id' });
    const { secret_id } = (await b.write('role/r/secret-id', {}))!.data as { secret_id: string };
    const keys = [...storage.dump().keys()].sort();

    storage.faults.failNext(1, 'batch');
    await expect(b.write('role/r/role-id', { role_id: 'new-id' })).rejects.toThrow('injected storage fault');
    expect([...storage.dump().keys()].sort()).toEqual(keys);
    expect((await b.read('role/r/role-id'))?.data).toEqual({ role_id: 'old-id' });
    expect((await login(b, { role_id: 'old-id', secret_id }))?.auth).toBeDefined();

    await b.write('role/r/role-id', { role_id: 'new-id' });
    expect((await login(b, { role_id: 'new-id', secret_id }))?.auth).toBeDefined();
    await expect(login(b, { role_id: 'old-id', secret_id })).rejects.toThrow('invalid role or secret ID');
  });
});
