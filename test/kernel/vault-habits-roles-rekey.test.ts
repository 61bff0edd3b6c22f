/**
 * More of what Vault's clients do, through the real binary (issue 27): SSH
 * zero-address roles written in either order and a silent DELETE of
 * config/ca; policies with the block brace on the next line; `sudo` on
 * auth/token/create; sys/internal/counters/tokens; sys/rekey/backup and
 * rekey verification (sys/rekey/verify).
 */
import { cliRunner } from '../helpers/cli';
import { startDevServer, tokenWithPolicy, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop();
});

describe('SSH zero-address roles', () => {
  it('config/zeroaddress before its role, an OTP role without cidr_list, and DELETE config/ca answering 204', async () => {
    expect((await s.api('POST', 'sys/mounts/ssh', { type: 'ssh' })).status).toBe(204);
    // Either order: the list first, naming a role that does not exist yet.
    expect((await s.api('POST', 'ssh/config/zeroaddress', { roles: 'zero' })).status).toBe(204);
    expect((await s.api('POST', 'ssh/roles/zero', { key_type: 'otp', default_user: 'ubuntu' })).status).toBe(204);
    expect((await s.api('GET', 'ssh/roles/zero')).body.data).toMatchObject({ key_type: 'otp', cidr_list: '' });
    expect((await s.api('POST', 'ssh/creds/zero', { ip: '192.0.2.10' })).body.data).toMatchObject({ key_type: 'otp', ip: '192.0.2.10', username: 'ubuntu' });
    // An OTP role without CIDRs and not in the list is accepted, and serves no address.
    expect((await s.api('POST', 'ssh/roles/nocidr', { key_type: 'otp', default_user: 'ubuntu' })).status).toBe(204);
    expect((await s.api('POST', 'ssh/creds/nocidr', { ip: '192.0.2.10' })).status).toBe(400);
    expect((await s.api('POST', 'ssh/lookup', { ip: '192.0.2.10' })).body.data.roles).toEqual(['zero']);
    // Then the role first, the list after it.
    expect((await s.api('POST', 'ssh/config/zeroaddress', { roles: 'zero,nocidr' })).status).toBe(204);
    expect((await s.api('POST', 'ssh/creds/nocidr', { ip: '192.0.2.11' })).status).toBe(200);

    expect((await s.api('POST', 'ssh/config/ca', { key_type: 'ed25519' })).status).toBe(200);
    const del = await s.api('DELETE', 'ssh/config/ca');
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await s.api('GET', 'ssh/config/ca')).status).toBe(400);
  });
});

describe('policies and token creation as Vault has them', () => {
  it('a policy whose block brace sits on the next line parses', async () => {
    const policy = 'path "auth/*"\n{\n  capabilities = ["read", "list"]\n}\n\npath "secret/*"\n\n{ capabilities = ["read"] }\n';
    expect((await s.api('PUT', 'sys/policies/acl/next-line', { policy })).status).toBe(204);
    const token = (await s.api('POST', 'auth/token/create', { policies: ['next-line'] })).body.auth.client_token as string;
    expect((await s.api('POST', 'sys/capabilities-self', { paths: ['auth/approle/role/x', 'secret/data/x'] }, { token })).body.data).toMatchObject({
      'auth/approle/role/x': ['read', 'list'],
      'secret/data/x': ['read'],
    });
  });

  it('sudo on auth/token/create: orphans and policies outside the caller\'s; without it, a refused orphan is 400', async () => {
    expect((await s.api('PUT', 'sys/policies/acl/elsewhere', { policy: 'path "secret/*" { capabilities = ["read"] }' })).status).toBe(204);
    const sudo = await tokenWithPolicy(s, 'path "auth/token/create" { capabilities = ["create", "update", "sudo"] }');
    const orphan = await s.api('POST', 'auth/token/create', { no_parent: true, policies: ['elsewhere'], ttl: '10m' }, { token: sudo });
    expect(orphan.status).toBe(200);
    expect(orphan.body.auth).toMatchObject({ orphan: true, policies: ['default', 'elsewhere'] });
    expect((await s.api('POST', 'auth/token/lookup', { token: orphan.body.auth.client_token })).body.data.orphan).toBe(true);
    // Still never root.
    expect((await s.api('POST', 'auth/token/create', { policies: ['root'] }, { token: sudo })).status).toBe(403);

    const plain = await tokenWithPolicy(s, 'path "auth/token/create" { capabilities = ["create", "update"] }');
    const refused = await s.api('POST', 'auth/token/create', { no_parent: true }, { token: plain });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join(' ')).toContain('root or sudo privileges required to create orphan token');
    expect((await s.api('POST', 'auth/token/create', { policies: ['elsewhere'] }, { token: plain })).status).toBe(400);
  });

  it('sys/internal/counters/tokens counts the service tokens', async () => {
    const before = await s.api('GET', 'sys/internal/counters/tokens');
    expect(before.status).toBe(200);
    const total = before.body.data.counters.service_tokens.total as number;
    expect(total).toBeGreaterThan(0);
    await s.api('POST', 'auth/token/create', { policies: ['default'] });
    await s.api('POST', 'auth/token/create', { policies: ['default'], type: 'batch' });
    expect((await s.api('GET', 'sys/internal/counters/tokens')).body.data.counters.service_tokens.total).toBe(total + 1);
    const reader = await tokenWithPolicy(s, 'path "secret/*" { capabilities = ["read"] }');
    expect((await s.api('GET', 'sys/internal/counters/tokens', undefined, { token: reader })).status).toBe(403);
  });
});

describe('rekey backup and verification', () => {
  let current: string[] = [];
  /** Whether these shares unseal the server; a refused share leaves it sealed and the progress reset. */
  const unsealsWith = async (keys: string[]) => {
    for (const key of keys) await s.api('POST', 'sys/unseal', { key }, { token: null });
    const sealed = (await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed as boolean;
    if (sealed) await s.api('POST', 'sys/unseal', { reset: true }, { token: null });
    return !sealed;
  };

  it('sys/rekey/backup: 400 "no backed-up keys found", DELETE 204, both need sudo; backup stays refused', async () => {
    const read = await s.api('GET', 'sys/rekey/backup');
    expect(read.status).toBe(400);
    expect(read.body.errors).toEqual(['no backed-up keys found']);
    expect((await s.api('DELETE', 'sys/rekey/backup')).status).toBe(204);
    const reader = await tokenWithPolicy(s, 'path "sys/rekey/backup" { capabilities = ["read", "delete"] }');
    expect((await s.api('GET', 'sys/rekey/backup', undefined, { token: reader })).status).toBe(403);
    expect((await s.api('GET', 'sys/rekey/backup', undefined, { token: null })).status).toBe(403);
    expect((await s.api('PUT', 'sys/rekey/init', { secret_shares: 3, secret_threshold: 2, backup: true }, { token: null })).status).toBe(400);
  });

  it('with require_verification the new shares take effect only once given back; cancelling keeps the old key', async () => {
    const old = s.unsealKey;
    expect((await s.api('GET', 'sys/rekey/verify', undefined, { token: null })).status).toBe(400);

    // A rekey cancelled during verification leaves the current key in force.
    let init = await s.api('PUT', 'sys/rekey/init', { secret_shares: 3, secret_threshold: 2, require_verification: true }, { token: null });
    expect(init.body).toMatchObject({ started: true, verification_required: true, t: 2, n: 3 });
    let done = await s.api('PUT', 'sys/rekey/update', { key: old, nonce: init.body.nonce }, { token: null });
    expect(done.body).toMatchObject({ complete: true, verification_required: true });
    expect(done.body.keys).toHaveLength(3);
    expect((await s.api('DELETE', 'sys/rekey/init', undefined, { token: null })).status).toBe(204);
    expect((await s.api('PUT', 'sys/seal', {})).status).toBe(204);
    expect(await unsealsWith(done.body.keys.slice(0, 2))).toBe(false);
    expect(await unsealsWith([old])).toBe(true);

    // The full ceremony.
    init = await s.api('PUT', 'sys/rekey/init', { secret_shares: 3, secret_threshold: 2, require_verification: true }, { token: null });
    done = await s.api('PUT', 'sys/rekey/update', { key: old, nonce: init.body.nonce }, { token: null });
    const keys = done.body.keys as string[];
    let vnonce = done.body.verification_nonce as string;
    expect(vnonce).not.toBe('');
    expect(vnonce).not.toBe(init.body.nonce);
    expect((await s.api('GET', 'sys/rekey/init', undefined, { token: null })).body).toMatchObject({ started: true, verification_required: true, verification_nonce: vnonce });
    expect((await s.api('PUT', 'sys/rekey/update', { key: old, nonce: init.body.nonce }, { token: null })).status).toBe(400);
    expect((await s.api('GET', 'sys/rekey/verify', undefined, { token: null })).body).toEqual({ started: true, nonce: vnonce, t: 2, n: 3, progress: 0 });

    // DELETE restarts the verification with a new nonce; the old one no longer counts.
    const restarted = await s.api('DELETE', 'sys/rekey/verify', undefined, { token: null });
    expect(restarted.status).toBe(200);
    expect(restarted.body).toMatchObject({ started: true, t: 2, n: 3, progress: 0 });
    expect(restarted.body.nonce).not.toBe(vnonce);
    expect((await s.api('PUT', 'sys/rekey/verify', { key: keys[0], nonce: vnonce }, { token: null })).status).toBe(400);
    vnonce = restarted.body.nonce;

    // A wrong set (a share of the old key is no share of the new one) is refused and resets the progress.
    expect((await s.api('PUT', 'sys/rekey/verify', { key: keys[0], nonce: vnonce }, { token: null })).body).toMatchObject({ progress: 1 });
    const wrong = await s.api('PUT', 'sys/rekey/verify', { key: keys[0]!.replace(/.$/, (c) => (c === '0' ? '1' : '0')), nonce: vnonce }, { token: null });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.join(' ')).toContain('rekey verification failed');
    expect((await s.api('GET', 'sys/rekey/verify', undefined, { token: null })).body).toMatchObject({ nonce: vnonce, progress: 0 });

    expect((await s.api('PUT', 'sys/rekey/verify', { key: keys[1], nonce: vnonce }, { token: null })).body).toMatchObject({ progress: 1 });
    const verified = await s.api('PUT', 'sys/rekey/verify', { key: keys[2], nonce: vnonce }, { token: null });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ nonce: vnonce, complete: true });
    expect((await s.api('GET', 'sys/rekey/init', undefined, { token: null })).body).toMatchObject({ started: false, required: 2 });

    expect((await s.api('PUT', 'sys/seal', {})).status).toBe(204);
    expect(await unsealsWith([old])).toBe(false);
    expect(await unsealsWith(keys.slice(0, 2))).toBe(true);
    current = keys;
  });

  it('the CLI: operator rekey -init -verify, the current shares, then -verify with the new ones', async () => {
    const cli = cliRunner({ addr: s.url, token: s.rootToken });
    const run = async (...args: string[]) => {
      const r = await cli.run(args);
      if (r.code !== 0) throw new Error(`${args.join(' ')}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
      return r.stdout;
    };
    const nonce = JSON.parse(await run('operator', 'rekey', '-init', '-verify', '-key-shares=2', '-key-threshold=2', '-format=json')).nonce as string;
    await run('operator', 'rekey', `-nonce=${nonce}`, current[0]!);
    const out = await run('operator', 'rekey', `-nonce=${nonce}`, current[1]!);
    expect(out).toContain('not in effect yet');
    const newKeys = [...out.matchAll(/^Key \d: (\S+)$/gm)].map((m) => m[1]!);
    const vnonce = /^Verification nonce: (\S+)$/m.exec(out)![1]!;
    expect(newKeys).toHaveLength(2);
    expect(await run('operator', 'rekey', '-verify', '-status')).toMatch(/Verification Progress\s+0\/2/);
    await run('operator', 'rekey', '-verify', `-nonce=${vnonce}`, newKeys[0]!);
    expect(await run('operator', 'rekey', '-verify', `-nonce=${vnonce}`, newKeys[1]!)).toContain('the new unseal keys are in force');
    expect((await cli.run(['operator', 'rekey', '-backup-retrieve'])).stderr).toContain('no backed-up keys found');

    expect((await s.api('PUT', 'sys/seal', {})).status).toBe(204);
    expect(await unsealsWith(current.slice(0, 2))).toBe(false);
    expect(await unsealsWith(newKeys)).toBe(true);
  });
});
