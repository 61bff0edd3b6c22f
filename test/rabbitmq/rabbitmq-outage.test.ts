/**
 * RabbitMQ stopped during revocation: the lease stays while the broker is
 * down and is revoked by the expiration manager's retries once it is back.
 * The broker stopped here is a dedicated one of this file alone
 * (test/helpers/rabbitmq.ts), never the shared one other test files use.
 */
import { sleep, waitFor } from '../helpers/processes';
import { amqpLoginFailure, dedicatedBroker, type DedicatedBroker } from '../helpers/rabbitmq';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

// A broker's stop and cold start take 5-40 s each on a loaded 2-core machine.
jest.setTimeout(300_000);

let b: DedicatedBroker;
let s: RunningServer;
const leaseExists = async (leaseId: string) => (await s.api('POST', 'sys/leases/lookup', { lease_id: leaseId })).status === 200;

beforeAll(async () => {
  b = await dedicatedBroker();
  s = await startDevServer({ dataDir: scratchDir('sr-mqdown-') });
  expect((await s.api('POST', 'sys/mounts/broker', { type: 'rabbitmq' })).status).toBe(204);
  expect((await s.api('POST', 'broker/config/connection', { connection_uri: b.api, username: b.username, password: b.password })).status).toBe(204);
  expect((await s.api('POST', 'broker/roles/app', { vhosts: '{"/": {"configure": ".*", "write": ".*", "read": ".*"}}' })).status).toBe(204);
});

afterAll(async () => {
  await s?.stop();
  b?.drop();
});

it('a broker that is down during revocation leaves the lease pending; it is revoked once the broker is back', async () => {
  const issued = await s.api('GET', 'broker/creds/app');
  expect(issued.status).toBe(200);
  const { username, password } = issued.body.data as { username: string; password: string };
  expect(await amqpLoginFailure(b, username, password)).toBe('logged in');
  await b.stop();
  try {
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id })).status).toBe(204);
    // The revocation fails against the stopped broker; the lease stays.
    await sleep(2_000);
    expect(await leaseExists(issued.body.lease_id)).toBe(true);
  } finally {
    await b.start();
  }
  // The expiration manager retries (10 s base, with jitter) and the revocation goes through.
  await waitFor('the lease to be revoked', async () => !(await leaseExists(issued.body.lease_id)), 90_000);
  expect((await b.admin('GET', `/api/users/${encodeURIComponent(username)}`)).status).toBe(404);
  expect(await amqpLoginFailure(b, username, password)).toMatch(/ACCESS_REFUSED|403/);
});
