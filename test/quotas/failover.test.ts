/**
 * A lease-count quota across an HA failover, two real nodes on the real (shared) PostgreSQL: the
 * active node fills a quota on auth/token/create (tokens are leases), a request a standby forwards
 * is counted by the active node like any other, the warm standby follows rules written on the
 * active node (the change feed), and once the active node goes away the node that takes over
 * counts the same leases (rebuilt from the lease store at takeover): it refuses the next one, and
 * frees a place when a token is revoked.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { haPostgresConfig, postgresUrl } from '../helpers/databases';
import { waitFor } from '../helpers/processes';
import { startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(150_000);

const suffix = randomBytes(4).toString('hex');
const tables = { data: `sr_quota_${suffix}`, lock: `sr_quota_lock_${suffix}` };
const config = () => haPostgresConfig({ tables });

let first: RunningServer;
let second: RunningServer;
const health = async (n: RunningServer) => (await fetch(`${n.url}/v1/sys/health`).catch(() => null))?.status ?? 0;
const create = (n: RunningServer) => n.api('POST', 'auth/token/create', { ttl: '1h', policies: ['default'] });

beforeAll(async () => {
  first = await startConfigServer(config());
  await waitFor('the first node to reach PostgreSQL', async () => (await first.api('GET', 'sys/seal-status', undefined, { token: null })).status === 200);
  const init = await first.api('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  expect(init.status).toBe(200);
  first.rootToken = init.body.root_token;
  expect((await first.api('PUT', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
  await waitFor('the first node to be active', async () => (await health(first)) === 200);
  second = await startConfigServer(config());
  second.rootToken = first.rootToken;
  await waitFor('the second node to reach PostgreSQL', async () => (await second.api('GET', 'sys/seal-status', undefined, { token: null })).status === 200);
  expect((await second.api('PUT', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
  await waitFor('the second node to be a standby', async () => (await health(second)) === 429);
});

afterAll(async () => {
  await Promise.all([first?.stop('SIGKILL'), second?.stop('SIGKILL')]);
  const c = new Client({ connectionString: postgresUrl() });
  await c.connect();
  await c.query(`DROP TABLE IF EXISTS ${tables.data}, ${tables.lock}`);
  await c.end();
});

describe('a lease-count quota across a failover', () => {
  it('is counted by the active node, also for forwarded requests, and holds on the node that takes over', async () => {
    expect((await first.api('POST', 'sys/quotas/lease-count/tokens', { path: 'auth/token/create', max_leases: 3 })).status).toBe(204);
    // The standby serves reads of its own: it sees the rule once the change feed brings it.
    await waitFor('the standby to follow the new rule', async () => (await second.api('GET', 'sys/quotas/lease-count/tokens')).body?.data?.max_leases === 3);
    expect((await create(first)).status).toBe(200);
    expect((await create(first)).status).toBe(200);
    // Forwarded by the standby, counted by the active node.
    const third = await create(second);
    expect(third.status).toBe(200);
    expect((await create(second)).status).toBe(429);
    expect((await create(first)).status).toBe(429);

    await first.stop('SIGTERM');
    await waitFor('the second node to take over', async () => (await health(second)) === 200, 60_000);
    expect((await create(second)).status).toBe(429);
    expect((await second.api('GET', 'sys/quotas/lease-count/tokens')).body.data).toMatchObject({ max_leases: 3, counter: 3 });
    expect((await second.api('POST', 'auth/token/revoke', { token: third.body.auth.client_token })).status).toBe(204);
    expect((await create(second)).status).toBe(200);
    expect((await create(second)).status).toBe(429);
  });
});
