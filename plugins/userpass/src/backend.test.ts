import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend, toOpenApi } from '@strongroom/sdk-plugin/testing';
import { createUserpassBackend } from './backend.js';
import { createPasswordHasher, type PasswordHash, type PasswordHasher } from './password.js';

const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);

/** A cheap hasher (tests only) that records every derivation's parameters. */
function countingHasher() {
  const inner = createPasswordHasher({ n: 2 ** 10, r: 8, p: 1 });
  const derivations: { n: number; r: number; p: number }[] = [];
  const hasher: PasswordHasher = {
    hash: async (pw) => {
      const h = await inner.hash(pw);
      derivations.push({ n: h.n, r: h.r, p: h.p });
      return h;
    },
    check: async (pw, stored) => {
      derivations.push({ n: stored.n, r: stored.r, p: stored.p });
      return inner.check(pw, stored);
    },
    checkMissing: async (pw) => {
      derivations.push({ n: 2 ** 10, r: 8, p: 1 });
      return inner.checkMissing(pw);
    },
  };
  return { hasher, derivations };
}

const userpass = async () => {
  const counting = countingHasher();
  const b = await createTestBackend(createUserpassBackend({ hasher: counting.hasher }), { mount: { type: 'userpass', path: 'userpass/' }, client: { remoteAddress: '10.1.2.3' } });
  return { b, ...counting };
};
type Harness = Awaited<ReturnType<typeof userpass>>['b'];
const login = (b: Harness, user: string, password: unknown, ip = '10.1.2.3') =>
  b.request({ operation: 'update', path: `login/${user}`, data: { password }, client: { remoteAddress: ip } });

describe('userpass users', () => {
  it('creates a user with token settings, reads them back without any password, lists and deletes', async () => {
    const { b } = await userpass();
    expect(await b.writeOperation('users/alice')).toBe('create');
    await b.write('users/alice', { password: 's3cret', token_policies: 'b,a', token_ttl: '1h', token_max_ttl: '2h' });
    expect(await b.writeOperation('users/alice')).toBe('update');
    const read = (await b.read('users/alice'))?.data ?? {};
    expect(read).toMatchObject({ token_policies: ['a', 'b'], policies: ['a', 'b'], token_ttl: 3600, token_max_ttl: 7200, token_type: 'default' });
    expect(JSON.stringify(read)).not.toMatch(/password|s3cret|scrypt/);
    expect((await b.list('users'))?.data).toEqual({ keys: ['alice'] });
    await b.delete('users/alice');
    expect(await b.read('users/alice')).toBeNull();
  });

  it('stores only an scrypt hash with its salt and parameters, a fresh salt each time', async () => {
    const { b } = await userpass();
    await b.write('users/alice', { password: 'same-password' });
    await b.write('users/bob', { password: 'same-password' });
    const raw = async (name: string) => JSON.parse(Buffer.from((await b.storage.get(`user/${name}`))!).toString('utf8')) as { password_hash: PasswordHash };
    const [a, c] = [await raw('alice'), await raw('bob')];
    expect(JSON.stringify(a)).not.toContain('same-password');
    expect(a.password_hash).toMatchObject({ algorithm: 'scrypt', n: 1024, r: 8, p: 1 });
    expect(a.password_hash.salt).not.toBe(c.password_hash.salt);
    expect(a.password_hash.hash).not.toBe(c.password_hash.hash);
  });

  it('requires a password at creation, keeps it on an update without one, and refuses bad names', async () => {
    const { b } = await userpass();
    expect((await errOf(b.write('users/alice', { token_ttl: 60 }))).message).toBe('field "password": missing password');
    await b.write('users/alice', { password: 'pw1' });
    await b.write('users/alice', { token_ttl: 60, password: '' });
    expect((await login(b, 'alice', 'pw1'))?.auth?.ttl).toBe(60);
    for (const bad of ['-dash', 'end-', '.dot', 'sp ace', 'semi;colon']) expect((await errOf(b.write(`users/${encodeURIComponent(bad)}`, { password: 'x' }))).message).toContain('field "username"');
    expect((await errOf(b.write('users/alice', { token_ttl: 100, token_max_ttl: 10 }))).message).toContain('token_ttl');
  });

  it('treats usernames as case-insensitive', async () => {
    const { b } = await userpass();
    await b.write('users/Alice', { password: 'pw' });
    expect((await b.list('users'))?.data).toEqual({ keys: ['alice'] });
    expect((await login(b, 'ALICE', 'pw'))?.auth?.metadata).toEqual({ username: 'alice' });
  });

  it('accepts Vault\'s legacy ttl, max_ttl, bound_cidrs and policies names', async () => {
    const { b } = await userpass();
    await b.write('users/old', { password: 'pw', ttl: '10m', max_ttl: '1h', bound_cidrs: '10.0.0.0/8', policies: 'p' });
    expect((await b.read('users/old'))?.data).toMatchObject({ token_ttl: 600, token_max_ttl: 3600, token_bound_cidrs: ['10.0.0.0/8'], token_policies: ['p'] });
  });

  it('changes the password and the policies through their own paths, only for existing users', async () => {
    const { b } = await userpass();
    await b.write('users/alice', { password: 'old', token_policies: 'a' });
    await b.write('users/alice/password', { password: 'new' });
    expect((await errOf(login(b, 'alice', 'old'))).message).toBe('invalid username or password');
    expect((await login(b, 'alice', 'new'))?.auth).toBeDefined();
    expect((await errOf(b.write('users/alice/password', {}))).message).toBe('field "password": missing password');
    await b.write('users/alice/policies', { token_policies: 'x,y' });
    expect((await b.read('users/alice'))?.data?.token_policies).toEqual(['x', 'y']);
    await b.write('users/alice/policies', { policies: ['z'] });
    expect((await login(b, 'alice', 'new'))?.auth?.policies).toEqual(['z']);
    expect((await errOf(b.write('users/nobody/password', { password: 'x' }))).message).toBe('user "nobody" does not exist');
    expect((await errOf(b.write('users/nobody/policies', { token_policies: 'x' }))).message).toBe('user "nobody" does not exist');
  });
});

describe('userpass login', () => {
  it('issues an auth block from the user\'s token settings', async () => {
    const { b } = await userpass();
    await b.write('users/alice', { password: 'pw', token_policies: 'dev', token_ttl: 90, token_max_ttl: 600, token_num_uses: 3 });
    const res = await login(b, 'alice', 'pw');
    expect(res?.auth).toMatchObject({
      displayName: 'alice', policies: ['dev'], metadata: { username: 'alice' }, ttl: 90, maxTtl: 600, numUses: 3, renewable: true, aliasName: 'alice',
    });
  });

  it('answers a missing user exactly as a wrong password, after the same derivation', async () => {
    const { b, derivations } = await userpass();
    await b.write('users/alice', { password: 'pw' });
    derivations.length = 0;
    const wrong = await errOf(login(b, 'alice', 'nope'));
    const missing = await errOf(login(b, 'mallory', 'nope'));
    const badName = await errOf(login(b, '-not-a-name', 'nope'));
    for (const e of [wrong, missing, badName]) {
      expect(e.status).toBe(400);
      expect(e.message).toBe('invalid username or password');
    }
    // One derivation each, with the same parameters: the time does not tell which failed.
    expect(derivations).toEqual([{ n: 1024, r: 8, p: 1 }, { n: 1024, r: 8, p: 1 }, { n: 1024, r: 8, p: 1 }]);
    expect((await errOf(login(b, 'alice', ''))).message).toBe('field "password": missing password');
  });

  it('checks token_bound_cidrs only after the password, with a 403', async () => {
    const { b } = await userpass();
    await b.write('users/far', { password: 'pw', token_bound_cidrs: '192.168.0.0/16' });
    expect((await errOf(login(b, 'far', 'wrong'))).status).toBe(400);
    expect((await errOf(login(b, 'far', 'pw'))).status).toBe(403);
    expect((await login(b, 'far', 'pw', '192.168.1.1'))?.auth?.boundCidrs).toEqual(['192.168.0.0/16']);
  });

  it('renews while the user exists with the same policies, with the user\'s current TTLs', async () => {
    const { b } = await userpass();
    await b.write('users/alice', { password: 'pw', token_policies: 'p1', token_ttl: 60 });
    const issued = (await login(b, 'alice', 'pw'))!;
    await b.write('users/alice', { token_ttl: 90 });
    expect((await b.renewAuth(issued))?.auth).toMatchObject({ policies: ['p1'], ttl: 90 });
    await b.write('users/alice/policies', { token_policies: 'p2' });
    expect((await errOf(b.renewAuth(issued))).message).toContain('policies of the user have changed');
    await b.delete('users/alice');
    expect((await errOf(b.renewAuth(issued))).message).toBe('user "alice" does not exist; the token cannot be renewed');
  });
});

describe('userpass API', () => {
  it('generates a stable OpenAPI document, the password marked sensitive (snapshot: review API drift here)', async () => {
    const { b } = await userpass();
    const doc = toOpenApi([{ prefix: 'auth/userpass/', description: b.backend.describe() }], { title: 'userpass', version: '1' });
    expect(JSON.stringify(doc)).toContain('/auth/userpass/login/{username}');
    expect(doc).toMatchSnapshot();
  });
});
