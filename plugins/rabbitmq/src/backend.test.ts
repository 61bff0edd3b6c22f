/**
 * The engine in-process (the SDK's test harness, in-memory storage), for what
 * needs no broker: validation, reads, lease arithmetic, the storage layout and
 * the OpenAPI document. Everything that talks to RabbitMQ is tested against a
 * real broker in test/rabbitmq/.
 */
import type { SecretRef } from '@strongroom/sdk-plugin';
import { createMemoryStorage, createTestBackend, toOpenApi } from '@strongroom/sdk-plugin/testing';
import { createRabbitmqBackend } from './index.js';
import type { ManagementClient, ManagementConnection } from './management-client.js';

const HOUR = 3600;

async function setup(now = () => Date.now()) {
  const storage = createMemoryStorage();
  const tb = await createTestBackend(createRabbitmqBackend({ now }), { mount: { path: 'broker/', type: 'rabbitmq' }, storage, system: { defaultLeaseTtl: async () => 2 * HOUR, maxLeaseTtl: async () => 10 * HOUR } });
  return { tb, storage };
}
const caught = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe('rabbitmq backend', () => {
  it('stores the connection (password included, in the barrier view) and never reads the password back', async () => {
    const { tb, storage } = await setup();
    await tb.write('config/connection', { connection_uri: 'http://127.0.0.1:15672/', username: 'admin', password: 's3cret-PW', verify_connection: false });
    const r = await tb.read('config/connection');
    expect(r?.data).toEqual({ connection_uri: 'http://127.0.0.1:15672', username: 'admin', verify_connection: false, password_policy: '', username_template: '' });
    expect(JSON.stringify(r)).not.toContain('s3cret-PW');
    expect(await storage.list('')).toEqual(['config/']);
    expect(await storage.list('config/')).toEqual(['connection']);
  });

  it('refuses a connection without its required fields, with credentials in the URL, or with a bad template', async () => {
    const { tb } = await setup();
    const base = { connection_uri: 'http://127.0.0.1:15672', username: 'admin', password: 'pw', verify_connection: false };
    for (const k of ['connection_uri', 'username', 'password'] as const) {
      const { [k]: _omit, ...rest } = base;
      expect(String(await caught(tb.write('config/connection', rest)))).toContain(k);
    }
    expect(String(await caught(tb.write('config/connection', { ...base, connection_uri: 'http://a:pw@h:1' })))).toContain('connection_uri');
    expect(String(await caught(tb.write('config/connection', { ...base, connection_uri: 'ftp://h' })))).toContain('connection_uri');
    expect(String(await caught(tb.write('config/connection', { ...base, username_template: '{{ nosuch }}' })))).toContain('username_template');
    expect(await tb.read('config/connection')).toBeNull();
  });

  it('config/lease: durations in, seconds out; ttl above max_ttl refused', async () => {
    const { tb } = await setup();
    expect(await tb.read('config/lease')).toBeNull();
    await tb.write('config/lease', { ttl: '1h', max_ttl: '2h' });
    expect((await tb.read('config/lease'))?.data).toEqual({ ttl: HOUR, max_ttl: 2 * HOUR });
    expect(String(await caught(tb.write('config/lease', { ttl: '3h', max_ttl: '2h' })))).toContain('ttl');
  });

  it('roles: create/update told apart, tags normalized, documents read back as sent, whole-role replace', async () => {
    const { tb } = await setup();
    expect(await tb.writeOperation('roles/r')).toBe('create');
    await tb.write('roles/r', { tags: ['management', ' monitoring '], vhosts: '{"/": {"write": ".*"}}' });
    expect(await tb.writeOperation('roles/r')).toBe('update');
    expect((await tb.read('roles/r'))?.data).toEqual({ tags: 'management,monitoring', vhosts: '{"/": {"write": ".*"}}', vhost_topics: '' });
    await tb.write('roles/r', { tags: 'administrator' });
    expect((await tb.read('roles/r'))?.data).toEqual({ tags: 'administrator', vhosts: '', vhost_topics: '' });
    expect((await tb.list('roles/'))?.data?.keys).toEqual(['r']);
    await tb.delete('roles/r');
    expect(await tb.read('roles/r')).toBeNull();
  });

  it('roles: every malformed document is a 400 naming its field', async () => {
    const { tb } = await setup();
    const bad: [Record<string, unknown>, string][] = [
      [{ vhosts: '{' }, 'vhosts'],
      [{ vhosts: '"/"' }, 'vhosts'],
      [{ vhosts: '{"/": {"read": null}}' }, 'vhosts'],
      [{ vhosts: '{"/": {"read": {"x": 1}}}' }, 'vhosts'],
      [{ vhosts: '{"/": []}' }, 'vhosts'],
      [{ tags: 't', vhost_topics: '{"/": []}' }, 'vhost_topics'],
      [{ tags: 't', vhost_topics: '{"/": {"x": {"configure": ".*"}}}' }, 'vhost_topics'],
      [{ tags: 't', vhost_topics: '{"/": {"x": {"read": 1}}}' }, 'vhost_topics'],
      [{ vhosts: '' }, 'tags'],
    ];
    for (const [body, field] of bad) {
      const err = (await caught(tb.write('roles/bad', body))) as { status?: number; message?: string };
      expect([body, err?.status, err?.message]).toEqual([body, 400, expect.stringContaining(field)]);
    }
  });

  it('creds without a connection is a 400 naming what to configure; of an unknown role a 400 naming it', async () => {
    const { tb } = await setup();
    expect(String(await caught(tb.read('creds/nope')))).toContain('unknown role: nope');
    await tb.write('roles/r', { tags: 'management' });
    expect(String(await caught(tb.read('creds/r')))).toContain('config/connection');
  });

  it('renewal: the lease config or the mount TTLs, never past issue time + max TTL', async () => {
    let now = 1_000_000_000_000;
    const { tb } = await setup(() => now);
    const renewAt = async (elapsed: number, increment = 0) => {
      now = 1_000_000_000_000 + elapsed * 1000;
      const secret: SecretRef = { leaseId: 'broker/creds/r/x', secretType: 'creds', internalData: { username: 'u', role: 'r' }, ttl: HOUR, increment, issueTime: 1_000_000_000_000, lastRenewalTime: null };
      const r = await tb.request({ operation: 'renew', path: 'creds/r', secret });
      return r?.secret;
    };
    // No lease config: the mount's default (2 h) within its maximum (10 h).
    expect(await renewAt(0)).toMatchObject({ ttl: 2 * HOUR, maxTtl: 10 * HOUR, renewable: true, internalData: { username: 'u', role: 'r' } });
    await tb.write('config/lease', { ttl: '1h', max_ttl: '3h' });
    expect((await renewAt(0))?.ttl).toBe(HOUR);
    expect((await renewAt(0, 5 * HOUR))?.ttl).toBe(3 * HOUR);
    expect((await renewAt(2.5 * HOUR, HOUR))?.ttl).toBe(HOUR / 2);
    expect((await renewAt(4 * HOUR))?.ttl).toBe(0);
  });

  it('reads the records stored before the record store, and follows a connection changed elsewhere once invalidated', async () => {
    const storage = createMemoryStorage();
    const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
    const conn = { connection_uri: 'http://a.invalid:15672', username: 'admin', password: 'pw', verify_connection: false, password_policy: '', username_template: 'u-{{.RoleName}}' };
    await storage.put('config/connection', json(conn));
    await storage.put('config/lease', json({ ttl: 60, max_ttl: 120 }));
    const vhostPermissions = { '/': { configure: '', write: 'w.*', read: '.*' } };
    await storage.put('role/r', json({ name: 'r', tags: 'management', vhosts: JSON.stringify(vhostPermissions), vhost_topics: '', vhostPermissions, topicPermissions: {} }));
    const made: { uri: string; user: string; vhost?: string; write?: string }[] = [];
    const clientFactory = (c: ManagementConnection): ManagementClient => ({
      verify: async () => {},
      putUser: async (user) => void made.push({ uri: c.uri, user }),
      setPermissions: async (vhost, _user, p) => void Object.assign(made[made.length - 1]!, { vhost, write: p.write }),
      setTopicPermissions: async () => {},
      deleteUser: async () => true,
      getUser: async () => null,
    });
    const tb = await createTestBackend(createRabbitmqBackend({ clientFactory }), { storage, system: { defaultLeaseTtl: async () => 2 * HOUR, maxLeaseTtl: async () => 10 * HOUR } });
    const creds = await tb.read('creds/r');
    expect(creds?.secret).toMatchObject({ ttl: 60, maxTtl: 120 });
    expect(made).toEqual([{ uri: 'http://a.invalid:15672', user: 'u-r', vhost: '/', write: 'w.*' }]);
    expect((await tb.read('roles/r'))?.data).toEqual({ tags: 'management', vhosts: JSON.stringify(vhostPermissions), vhost_topics: '' });
    await storage.put('config/connection', json({ ...conn, connection_uri: 'http://b.invalid:15672' }));
    await tb.backend.invalidateKey('config/connection');
    await tb.read('creds/r');
    expect(made[1]?.uri).toBe('http://b.invalid:15672');
  });

  it('generates a stable OpenAPI document (snapshot: review API drift here)', async () => {
    const { tb } = await setup();
    expect(toOpenApi([{ prefix: 'broker/', description: tb.backend.describe() }], { title: 'rabbitmq', version: '1' })).toMatchSnapshot();
  });
});
