/**
 * The message-broker engine (mount type rabbitmq, at broker/ as in the spec)
 * through the real binary and its plugin process, against a real RabbitMQ
 * (test/helpers/rabbitmq.ts). Issued credentials are used over AMQP with
 * amqplib; what the engine created is checked through the management API.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as amqp from 'amqplib';
import { waitFor } from '../helpers/processes';
import { amqpConnect, amqpLoginFailure, sharedBroker, type Broker } from '../helpers/rabbitmq';
import { freePort, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let b: Broker;
let s: RunningServer;
const run = randomBytes(4).toString('hex');
/** Exchange and queue names of this file, so runs against one broker never meet. */
const nm = (base: string) => `${base}-${run}`;

const connection = () => ({ connection_uri: b.api, username: b.username, password: b.password });
const userOf = async (name: string) => b.admin('GET', `/api/users/${encodeURIComponent(name)}`);
const tagsOf = (u: { tags: string[] | string }) => (Array.isArray(u.tags) ? u.tags : u.tags.split(',').filter(Boolean)).sort();
const creds = async (role: string) => {
  const r = await s.api('GET', `broker/creds/${role}`);
  expect([r.status, r.text]).toEqual([200, expect.any(String)]);
  return r.body as { lease_id: string; lease_duration: number; renewable: boolean; data: { username: string; password: string } };
};

/** Publishes on a confirm channel: resolves when the broker took it, rejects with the broker's reason when refused. */
async function publish(conn: amqp.ChannelModel, exchange: string, routingKey: string, body: string): Promise<void> {
  const ch = await conn.createConfirmChannel();
  const closed = new Promise<never>((_, reject) => ch.once('error', (err: Error) => reject(err)));
  closed.catch(() => undefined);
  ch.publish(exchange, routingKey, Buffer.from(body));
  await Promise.race([ch.waitForConfirms(), closed]);
  await ch.close();
}

const refusal = async (p: Promise<unknown>) => {
  const err = (await p.then(() => null, (e: unknown) => e)) as Error | null;
  return err ? err.message : 'allowed';
};

beforeAll(async () => {
  b = await sharedBroker();
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/broker', { type: 'rabbitmq' })).status).toBe(204);
  // Things the roles of this file may not touch, made by the administrator.
  expect((await b.admin('PUT', `/api/exchanges/%2F/${nm('denied.x')}`, { type: 'fanout' })).status).toBe(201);
  expect((await b.admin('PUT', `/api/queues/%2F/${nm('denied.q')}`, {})).status).toBe(201);
});

afterAll(async () => {
  await s?.stop();
  await b?.admin('DELETE', `/api/exchanges/%2F/${nm('denied.x')}`);
  await b?.admin('DELETE', `/api/queues/%2F/${nm('denied.q')}`);
});

describe('config/connection', () => {
  it('a wrong password fails verification with a 400 that does not echo it; nothing is saved', async () => {
    const wrong = `Wrong-${randomBytes(10).toString('hex')}`;
    const r = await s.api('POST', 'broker/config/connection', { ...connection(), password: wrong });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/verify_connection/);
    expect(r.text).not.toContain(wrong);
    expect((await s.api('GET', 'broker/config/connection')).status).toBe(404);
  });

  it('an unreachable API fails verification with a 400; verify_connection=false saves it anyway', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const r = await s.api('POST', 'broker/config/connection', { ...connection(), connection_uri: dead });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/ECONNREFUSED/);
    expect(r.text).not.toContain(b.password);
    expect((await s.api('POST', 'broker/config/connection', { ...connection(), connection_uri: dead, verify_connection: false })).status).toBe(204);
  });

  it('required fields, credentials inside the URL and a bad username_template are 400s naming the field', async () => {
    for (const k of ['connection_uri', 'username', 'password'] as const) {
      const body: Record<string, unknown> = { ...connection() };
      delete body[k];
      const r = await s.api('POST', 'broker/config/connection', body);
      expect([r.status, r.body.errors[0]]).toEqual([400, expect.stringContaining(k)]);
    }
    const inline = new URL(b.api);
    inline.username = 'admin';
    inline.password = 'inline-secret';
    const r = await s.api('POST', 'broker/config/connection', { ...connection(), connection_uri: inline.toString() });
    expect([r.status, r.body.errors[0]]).toEqual([400, expect.stringContaining('connection_uri')]);
    expect(r.text).not.toContain('inline-secret');
    const t = await s.api('POST', 'broker/config/connection', { ...connection(), username_template: '{{ .RoleName | nosuchfunc }}' });
    expect([t.status, t.body.errors[0]]).toEqual([400, expect.stringContaining('username_template')]);
  });

  it('is saved after verification and read back without the password', async () => {
    expect((await s.api('POST', 'broker/config/connection', connection())).status).toBe(204);
    const r = await s.api('GET', 'broker/config/connection');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ connection_uri: b.api, username: b.username, verify_connection: true, password_policy: '', username_template: '' });
    expect(r.text).not.toContain(b.password);
    // Stored encrypted: the password is nowhere in the server's data files.
    const files = readdirSync(s.dataDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.length).toBeGreaterThan(0);
    for (const e of files) expect(readFileSync(join(e.parentPath, e.name)).includes(b.password)).toBe(false);
  });
});

describe('config/lease', () => {
  afterAll(async () => {
    await s.api('POST', 'broker/config/lease', { ttl: 0, max_ttl: 0 });
  });

  it('reads back ttl and max_ttl in seconds; ttl above max_ttl is a 400', async () => {
    expect((await s.api('GET', 'broker/config/lease')).status).toBe(404);
    expect((await s.api('POST', 'broker/config/lease', { ttl: '30m', max_ttl: 3600 })).status).toBe(204);
    expect((await s.api('GET', 'broker/config/lease')).body.data).toEqual({ ttl: 1800, max_ttl: 3600 });
    const bad = await s.api('POST', 'broker/config/lease', { ttl: '2h', max_ttl: '1h' });
    expect([bad.status, bad.body.errors[0]]).toEqual([400, expect.stringContaining('ttl')]);
  });

  it('issued credentials get the lease config, and renewals stop at max_ttl', async () => {
    expect((await s.api('POST', 'broker/roles/lease-role', { tags: 'management' })).status).toBe(204);
    const c = await creds('lease-role');
    expect([c.lease_duration, c.renewable]).toEqual([1800, true]);
    const renewed = await s.api('POST', 'sys/leases/renew', { lease_id: c.lease_id, increment: '10h' });
    expect(renewed.status).toBe(200);
    expect(renewed.body.lease_duration).toBeGreaterThan(3500);
    expect(renewed.body.lease_duration).toBeLessThanOrEqual(3600);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: c.lease_id })).status).toBe(204);
  });
});

describe('roles', () => {
  it('invalid JSON, a non-object, a pattern that is not a string or an unknown key are 400s naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ vhosts: '{"/": {"configure": ".*"' }, 'vhosts'],
      [{ vhosts: '["/"]' }, 'vhosts'],
      [{ vhosts: '{"/": {"configure": ".*", "write": 5, "read": ".*"}}' }, 'vhosts'],
      [{ vhosts: '{"/": {"configure": ".*", "wirte": ".*"}}' }, 'vhosts'],
      [{ vhosts: '{"/": ".*"}' }, 'vhosts'],
      [{ tags: 'management', vhost_topics: '{"/": {"amq.topic": {"write": ".*"' }, 'vhost_topics'],
      [{ tags: 'management', vhost_topics: '{"/": {"amq.topic": {"write": [".*"], "read": ".*"}}}' }, 'vhost_topics'],
      [{ tags: 'management', vhost_topics: '{"/": {"amq.topic": ".*"}}' }, 'vhost_topics'],
      [{ vhosts: 7 }, 'vhosts'],
      [{}, 'tags'],
    ];
    for (const [body, field] of cases) {
      const r = await s.api('POST', 'broker/roles/bad', body);
      expect([JSON.stringify(body), r.status, r.body.errors.join(' ')]).toEqual([JSON.stringify(body), 400, expect.stringContaining(field)]);
    }
    expect((await s.api('GET', 'broker/roles/bad')).status).toBe(404);
  });

  it('reads back what was sent; LIST pages with after and limit; delete removes', async () => {
    const vhosts = '{"/": {"configure": "^a\\\\.", "write": "^a\\\\.", "read": ".*"}}';
    const topics = '{"/": {"amq.topic": {"write": "^t\\\\.", "read": ".*"}}}';
    for (const n of ['r-a', 'r-b', 'r-c', 'r-d']) expect((await s.api('POST', `broker/roles/${n}`, { tags: 'management, monitoring', vhosts, vhost_topics: topics })).status).toBe(204);
    const read = await s.api('GET', 'broker/roles/r-b');
    expect(read.body.data).toEqual({ tags: 'management,monitoring', vhosts, vhost_topics: topics });
    // An object is taken too (clients that do not pre-encode), and read back as JSON text.
    expect((await s.api('POST', 'broker/roles/r-e', { vhosts: { '/': { configure: '', write: '.*', read: '.*' } } })).status).toBe(204);
    expect(JSON.parse((await s.api('GET', 'broker/roles/r-e')).body.data.vhosts)).toEqual({ '/': { configure: '', write: '.*', read: '.*' } });

    const page = await s.api('LIST', 'broker/roles?after=r-a&limit=2');
    expect(page.body.data.keys).toEqual(['r-b', 'r-c']);
    const all = await s.api('GET', 'broker/roles?list=true');
    expect(all.body.data.keys).toEqual(expect.arrayContaining(['r-a', 'r-b', 'r-c', 'r-d', 'r-e']));
    expect((await s.api('LIST', 'broker/roles/?after=r-c&limit=5')).body.data.keys).toEqual(['r-d', 'r-e']);
    for (const n of ['r-a', 'r-b', 'r-c', 'r-d', 'r-e']) expect((await s.api('DELETE', `broker/roles/${n}`)).status).toBe(204);
    expect((await s.api('GET', 'broker/roles/r-b')).status).toBe(404);
  });

  it('creds of an unknown role is a 400', async () => {
    const r = await s.api('GET', 'broker/creds/no-such-role');
    expect([r.status, r.body.errors[0]]).toEqual([400, expect.stringContaining('no-such-role')]);
  });
});

describe('creds', () => {
  const role = 'app';
  beforeAll(async () => {
    const p = `^(app-${run}\\..*|amq\\.topic)$`;
    const r = await s.api('POST', `broker/roles/${role}`, {
      tags: 'management,monitoring',
      vhosts: JSON.stringify({ '/': { configure: `^app-${run}\\.`, write: p, read: p } }),
      vhost_topics: JSON.stringify({ '/': { 'amq.topic': { write: '^orders\\.', read: '.*' } } }),
    });
    expect(r.status).toBe(204);
  });

  it('issue a user with the role tags (checked through the management API) and a default username', async () => {
    const c = await creds(role);
    expect(c.renewable).toBe(true);
    expect(c.data.username).toMatch(/^root-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(c.data.password).toMatch(/^[A-Za-z0-9]{36}$/);
    const u = await userOf(c.data.username);
    expect(u.status).toBe(200);
    expect(tagsOf(u.body)).toEqual(['management', 'monitoring']);
    await s.api('POST', 'sys/leases/revoke', { lease_id: c.lease_id });
  });

  it('publish and consume only where the role patterns allow', async () => {
    const c = await creds(role);
    const conn = await amqpConnect(b, c.data.username, c.data.password);
    try {
      const ch = await conn.createChannel();
      const x = `app-${run}.x`;
      const q = `app-${run}.q`;
      await ch.assertExchange(x, 'fanout', { durable: false, autoDelete: true });
      await ch.assertQueue(q, { durable: false, autoDelete: true });
      await ch.bindQueue(q, x, '');
      await publish(conn, x, '', 'hello');
      const got = await new Promise<string>((resolve) => void ch.consume(q, (m) => m && resolve(m.content.toString()), { noAck: true }));
      expect(got).toBe('hello');
      await ch.close();

      // Write is denied on another exchange: the broker closes the channel with ACCESS_REFUSED.
      expect(await refusal(publish(conn, nm('denied.x'), '', 'nope'))).toMatch(/ACCESS_REFUSED/);
      // Read is denied on another queue.
      const ch2 = await conn.createChannel();
      ch2.on('error', () => undefined);
      expect(await refusal(ch2.consume(nm('denied.q'), () => undefined))).toMatch(/ACCESS_REFUSED/);
      // Configure is denied outside the pattern.
      const ch3 = await conn.createChannel();
      ch3.on('error', () => undefined);
      expect(await refusal(ch3.assertQueue(`other-${run}.q`, { autoDelete: true }))).toMatch(/ACCESS_REFUSED/);
      // Topic permissions: amq.topic takes only routing keys matching ^orders\.
      await publish(conn, 'amq.topic', 'orders.new', 'ok');
      expect(await refusal(publish(conn, 'amq.topic', 'billing.new', 'nope'))).toMatch(/ACCESS_REFUSED/);
    } finally {
      await conn.close().catch(() => undefined);
      await s.api('POST', 'sys/leases/revoke', { lease_id: c.lease_id });
    }
  });

  it('revoking the lease deletes the user: the AMQP login then fails', async () => {
    const c = await creds(role);
    expect(await amqpLoginFailure(b, c.data.username, c.data.password)).toBe('logged in');
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: c.lease_id })).status).toBe(204);
    await waitFor('the user to be deleted', async () => (await userOf(c.data.username)).status === 404);
    expect(await amqpLoginFailure(b, c.data.username, c.data.password)).toMatch(/ACCESS_REFUSED|403/);
  });

  it('username_template and password_policy of the connection shape the credentials', async () => {
    const policy = 'length = 24\nrule "charset" {\n  charset = "abcdef"\n}';
    expect((await s.api('PUT', 'sys/policies/password/broker-hex', { policy })).status).toBe(204);
    expect((await s.api('POST', 'broker/config/connection', { ...connection(), username_template: 'sr-{{.RoleName}}-{{random 8}}', password_policy: 'broker-hex' })).status).toBe(204);
    try {
      const c = await creds(role);
      expect(c.data.username).toMatch(/^sr-app-[A-Za-z0-9]{8}$/);
      expect(c.data.password).toMatch(/^[a-f]{24}$/);
      expect(await amqpLoginFailure(b, c.data.username, c.data.password)).toBe('logged in');
      await s.api('POST', 'sys/leases/revoke', { lease_id: c.lease_id });
    } finally {
      expect((await s.api('POST', 'broker/config/connection', connection())).status).toBe(204);
    }
  });

  it('an upstream error is a 502 without any password, and leaves no user behind', async () => {
    const r0 = await s.api('POST', 'broker/roles/bad-vhost', { vhosts: JSON.stringify({ [`no-such-vhost-${run}`]: { configure: '.*', write: '.*', read: '.*' } }) });
    expect(r0.status).toBe(204);
    const r = await s.api('GET', 'broker/creds/bad-vhost');
    expect(r.status).toBe(502);
    expect(r.text).toContain(`no-such-vhost-${run}`);
    expect(r.text).not.toContain(b.password);
    const username = /of (root-[0-9a-f-]{36}) in vhost/.exec(r.text)?.[1];
    expect(username).toBeDefined();
    expect((await userOf(username!)).status).toBe(404);

    // A broker that cannot be reached.
    const dead = `http://127.0.0.1:${await freePort()}`;
    expect((await s.api('POST', 'broker/config/connection', { ...connection(), connection_uri: dead, verify_connection: false })).status).toBe(204);
    try {
      const d = await s.api('GET', `broker/creds/${role}`);
      expect(d.status).toBe(502);
      expect(d.text).toMatch(/ECONNREFUSED/);
      expect(d.text).not.toContain(b.password);
    } finally {
      expect((await s.api('POST', 'broker/config/connection', connection())).status).toBe(204);
    }
  });
});
