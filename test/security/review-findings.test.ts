/**
 * Security review findings 6, 7, 8 and 9 (issue 11) against the real binary:
 * sudo on Vault's root-protected sys paths, the UI mount listing filtered by
 * the caller's ACL, disabling a mount under concurrent writes, and the small
 * ones (batch-token capabilities, owner-only storage files, read-only seal
 * status, whitespace mount names, lookup-self's use count).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { startDevServer, type RunningServer, tokenWithPolicy } from '../helpers/server';

jest.setTimeout(180_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

const tokenWith = (policy: string, extra: Record<string, unknown> = {}) => tokenWithPolicy(s, policy, extra);

describe('finding 6: sys/auth/* and sys/leases need sudo', () => {
  const caps = '["create", "read", "update", "delete", "list"]';
  it('refuses enable, tune, disable and the irrevocable lease list without sudo', async () => {
    const t = await tokenWith(`path "sys/auth/*" { capabilities = ${caps} }\npath "sys/leases" { capabilities = ${caps} }`);
    expect((await s.api('POST', 'sys/auth/ap-nosudo', { type: 'approle' }, { token: t })).status).toBe(403);
    expect((await s.api('POST', 'sys/auth/token/tune', { default_lease_ttl: '1h' }, { token: t })).status).toBe(403);
    expect((await s.api('POST', 'sys/auth/ap-root', { type: 'approle' })).status).toBe(204);
    expect((await s.api('DELETE', 'sys/auth/ap-root', undefined, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'sys/leases?type=irrevocable', undefined, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'sys/auth')).body.data['ap-root/']).toBeDefined();
  });

  it('allows them with sudo', async () => {
    const t = await tokenWith(`path "sys/auth/*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }\npath "sys/leases" { capabilities = ["read", "sudo"] }`);
    expect((await s.api('POST', 'sys/auth/ap-sudo', { type: 'approle' }, { token: t })).status).toBe(204);
    expect((await s.api('DELETE', 'sys/auth/ap-sudo', undefined, { token: t })).status).toBe(204);
    expect((await s.api('GET', 'sys/leases?type=irrevocable', undefined, { token: t })).status).toBe(200);
  });
});

describe('finding 7: sys/internal/ui/mounts shows only mounts the caller can use', () => {
  beforeAll(async () => {
    expect((await s.api('POST', 'sys/mounts/hidden', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  });

  it('lists the mounts under which the token has a capability, and no others', async () => {
    const t = await tokenWith('path "secret/data/app/*" { capabilities = ["read"] }');
    const r = await s.api('GET', 'sys/internal/ui/mounts', undefined, { token: t });
    expect(r.status).toBe(200);
    // sys/ and cubbyhole/ too: the default policy grants sys/capabilities-self and friends and cubbyhole/* (Vault shows them as well).
    expect(Object.keys(r.body.data.secret).sort()).toEqual(['cubbyhole/', 'secret/', 'sys/']);
    // The default policy grants auth/token/lookup-self and friends.
    expect(Object.keys(r.body.data.auth)).toEqual(['token/']);
    const root = await s.api('GET', 'sys/internal/ui/mounts');
    expect(Object.keys(root.body.data.secret)).toEqual(expect.arrayContaining(['secret/', 'hidden/', 'sys/']));
  });

  it('answers the mount of a path only where the token has a capability', async () => {
    const t = await tokenWith('path "secret/data/app/*" { capabilities = ["read"] }');
    const seen = await s.api('GET', 'sys/internal/ui/mounts/secret/data/app/x', undefined, { token: t });
    expect(seen.status).toBe(200);
    expect(seen.body.data.options.version).toBe('2');
    expect((await s.api('GET', 'sys/internal/ui/mounts/hidden/data/x', undefined, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'sys/internal/ui/mounts/hidden/data/x', undefined, { token: null })).status).toBe(403);
  });
});

describe('finding 9: the small ones', () => {
  it('capabilities-self answers for a batch token', async () => {
    const t = await tokenWith('path "secret/data/*" { capabilities = ["read", "list"] }', { type: 'batch' });
    const r = await s.api('POST', 'sys/capabilities-self', { paths: ['secret/data/x'] }, { token: t });
    expect(r.status).toBe(200);
    expect([...r.body.data.capabilities].sort()).toEqual(['list', 'read']);
  });

  it('DELETE sys/seal-status and sys/health are refused (405)', async () => {
    expect((await s.api('DELETE', 'sys/seal-status')).status).toBe(405);
    expect((await s.api('POST', 'sys/seal-status', {})).status).toBe(405);
    expect((await s.api('DELETE', 'sys/health')).status).toBe(405);
    expect((await s.api('GET', 'sys/seal-status')).status).toBe(200);
  });

  it('a mount path of whitespace is refused with a 400 naming path', async () => {
    for (const p of ['%20', '%20%20/x', 'a%09b', 'ok/%20']) {
      const r = await s.api('POST', `sys/mounts/${p}`, { type: 'kv' });
      expect(r.status).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(/path/);
    }
    expect(Object.keys((await s.api('GET', 'sys/mounts')).body.data).some((k) => k.trim() !== k || k.startsWith(' '))).toBe(false);
  });

  it('lookup-self shows the uses left after this request', async () => {
    const t = await tokenWith('path "secret/*" { capabilities = ["read"] }', { num_uses: 3 });
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t })).body.data.num_uses).toBe(2);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t })).body.data.num_uses).toBe(1);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t })).body.data.num_uses).toBe(0);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(403);
  });

  it('the data directory and every file in it are owner-only', async () => {
    expect((await s.api('POST', 'secret/data/perm', { data: { v: '1' } })).status).toBe(200);
    const walk = (dir: string): string[] => [dir, ...readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)]))];
    const storage = walk(s.dataDir).filter((f) => !f.includes(`${join(s.dataDir, 'tmp')}`));
    expect(storage.length).toBeGreaterThan(3);
    const loose = storage.filter((f) => (statSync(f).mode & 0o077) !== 0).map((f) => `${f} ${(statSync(f).mode & 0o777).toString(8)}`);
    expect(loose).toEqual([]);
  });
});

describe('finding 8: disabling a mount while requests are in flight', () => {
  it('25 enable/disable cycles under 8 writers: clean answers only, and no data left under a removed mount', async () => {
    const statuses = new Map<number, number>();
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const r = await s.api('POST', `race/data/w${w}-${i % 5}`, { data: { v: String(i) } });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    const uuids: string[] = [];
    for (let cycle = 0; cycle < 25; cycle++) {
      expect((await s.api('POST', 'sys/mounts/race', { type: 'kv', options: { version: '2' } })).status).toBe(204);
      uuids.push((await s.api('GET', 'sys/mounts/race')).body.data.uuid);
      await new Promise((r) => setTimeout(r, 20 + (cycle % 5) * 10));
      expect((await s.api('DELETE', 'sys/mounts/race')).status).toBe(204);
    }
    stop = true;
    await Promise.all(writers);
    // Served (200/204), or refused cleanly: no such route (404), starting/stopping (503), a kv-v2 upgrade race (400).
    const bad = [...statuses.entries()].filter(([code]) => ![200, 204, 400, 404, 503].includes(code));
    expect(bad).toEqual([]);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(new Set(uuids).size).toBe(25);

    // Nothing under any removed mount's prefix: read the storage itself once the server is down.
    const live = new Set(Object.values((await s.api('GET', 'sys/mounts')).body.data).map((m: any) => m.uuid as string));
    await s.stop('SIGTERM');
    const db = new Level<string, Buffer>(findLevelDir(s.dataDir), { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    await db.open();
    const orphans = new Set<string>();
    const liveSeen = new Set<string>();
    for await (const key of db.keys({ gte: 'logical/', lt: 'logical0' })) {
      const uuid = key.split('/')[1]!;
      (live.has(uuid) ? liveSeen : orphans).add(uuid);
    }
    await db.close();
    expect([...orphans]).toEqual([]);
    // The prefix really is where a mount writes (a wrong guess would pass vacuously): secret/ has data there.
    expect(liveSeen.size).toBeGreaterThan(0);
  });
});

function findLevelDir(dir: string): string {
  for (const d of [dir, ...readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name))]) {
    if (readdirSync(d).includes('CURRENT')) return d;
  }
  throw new Error(`no LevelDB under ${dir}`);
}
