/**
 * The RabbitMQ engine's management API client against a real broker
 * (test/helpers/rabbitmq.ts): what it creates is checked through the
 * management API and over AMQP, and its errors are 502s that never carry a
 * password.
 */
import { randomBytes } from 'node:crypto';
import { StrongroomError } from '@strongroom/sdk-plugin';
import { createManagementClient, normalizeBaseUri, type ManagementClient } from '../../plugins/rabbitmq/src/management-client';
import { amqpConnect, amqpLoginFailure, sharedBroker, type Broker } from '../helpers/rabbitmq';
import { freePort } from '../helpers/server';

jest.setTimeout(120_000);

let b: Broker;
let client: ManagementClient;
const created: string[] = [];
const userName = () => {
  const n = `mc-${randomBytes(6).toString('hex')}`;
  created.push(n);
  return n;
};
const caught = async (p: Promise<unknown>) => (await p.then(() => null, (e: unknown) => e)) as StrongroomError;

beforeAll(async () => {
  b = await sharedBroker();
  client = createManagementClient({ uri: b.api, username: b.username, password: b.password });
});

afterAll(async () => {
  await Promise.all(created.map((n) => b.admin('DELETE', `/api/users/${encodeURIComponent(n)}`)));
});

it('verify succeeds with the administrator and fails with a wrong password, as a 502 without it', async () => {
  await client.verify();
  const wrong = `wrong-${randomBytes(8).toString('hex')}`;
  const err = await caught(createManagementClient({ uri: b.api, username: b.username, password: wrong }).verify());
  expect(err).toBeInstanceOf(StrongroomError);
  expect(err.status).toBe(502);
  expect(err.message).toMatch(/401/);
  expect(err.message).not.toContain(wrong);
});

it('creates a user with tags, permissions and topic permissions, and deletes it', async () => {
  const name = userName();
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await client.putUser(name, password, ['monitoring', 'policymaker']);
  await client.setPermissions('/', name, { configure: '^mc\\.', write: '^mc\\.', read: '^mc\\.' });
  await client.setTopicPermissions('/', name, 'amq.topic', { write: '^orders\\.', read: '.*' });

  expect((await client.getUser(name))?.tags.sort()).toEqual(['monitoring', 'policymaker']);
  const perms = await b.admin('GET', `/api/permissions/%2F/${encodeURIComponent(name)}`);
  expect(perms.body).toMatchObject({ user: name, vhost: '/', configure: '^mc\\.', write: '^mc\\.', read: '^mc\\.' });
  const topics = await b.admin('GET', `/api/topic-permissions/%2F/${encodeURIComponent(name)}`);
  expect(topics.body).toEqual([expect.objectContaining({ exchange: 'amq.topic', write: '^orders\\.', read: '.*' })]);

  const conn = await amqpConnect(b, name, password);
  await conn.close();

  expect(await client.deleteUser(name)).toBe(true);
  expect(await client.getUser(name)).toBeNull();
  expect(await amqpLoginFailure(b, name, password)).toMatch(/ACCESS_REFUSED|403/);
  // Deleting again is not an error: the user is gone either way.
  expect(await client.deleteUser(name)).toBe(false);
});

it('a broker error is a 502 naming what failed, without the new user\'s password or the admin\'s', async () => {
  const name = userName();
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await client.putUser(name, password, []);
  const err = await caught(client.setPermissions('no-such-vhost', name, { configure: '.*', write: '.*', read: '.*' }));
  expect(err.status).toBe(502);
  expect(err.message).toContain('no-such-vhost');
  expect(err.message).not.toContain(b.password);
  expect(err.message).not.toContain(password);
});

it('an unreachable broker is a 502 naming the address and the network error', async () => {
  const port = await freePort();
  const err = await caught(createManagementClient({ uri: `http://127.0.0.1:${port}`, username: 'admin', password: 'secret-pw-123' }).deleteUser('x'));
  expect(err.status).toBe(502);
  expect(err.message).toContain(`127.0.0.1:${port}`);
  expect(err.message).toMatch(/ECONNREFUSED/);
  expect(err.message).not.toContain('secret-pw-123');
});

it('usernames and vhosts with URL-special characters reach the broker intact', async () => {
  const vhost = `vh/${randomBytes(3).toString('hex')} ?#`;
  expect((await b.admin('PUT', `/api/vhosts/${encodeURIComponent(vhost)}`)).status).toBe(201);
  try {
    const name = `${userName()}/a b?c#d%`;
    created.push(name);
    await client.putUser(name, 'pw-ABCdef123', ['management']);
    await client.setPermissions(vhost, name, { configure: '', write: '.*', read: '.*' });
    const perms = await b.admin('GET', `/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`);
    expect(perms.body).toMatchObject({ user: name, vhost, configure: '', write: '.*' });
    expect(await client.deleteUser(name)).toBe(true);
  } finally {
    await b.admin('DELETE', `/api/vhosts/${encodeURIComponent(vhost)}`);
  }
});

it('normalizeBaseUri keeps scheme, host and path prefix and refuses credentials in the URL', () => {
  expect(normalizeBaseUri('http://127.0.0.1:15672/')).toBe('http://127.0.0.1:15672');
  expect(normalizeBaseUri('https://mq.example:443/rabbit/')).toBe('https://mq.example/rabbit');
  expect(() => normalizeBaseUri('http://admin:pw@127.0.0.1:15672')).toThrow(/connection_uri: must not contain credentials/);
  expect(() => normalizeBaseUri('amqp://127.0.0.1:5672')).toThrow(/connection_uri/);
  expect(() => normalizeBaseUri('not a url')).toThrow(/connection_uri/);
});
