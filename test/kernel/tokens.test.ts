/**
 * A token that reaches its num_uses limit is revoked at its last use, with
 * everything hanging off it: the leases it obtained are revoked in the
 * engine, and its accessor no longer resolves. (Vault does not let a token
 * with a use limit create child tokens, so its leases are what it can leave
 * behind.) Real binary, real plugin process.
 */
import { records, startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { waitFor } from '../helpers/processes';

jest.setTimeout(60_000);

let s: LeaseServer;
beforeAll(async () => {
  s = await startLeaseServer();
  await s.api('PUT', 'sys/policies/acl/lease-user', { policy: 'path "lt/creds/*" { capabilities = ["read"] }\npath "auth/token/create" { capabilities = ["update"] }' });
  expect((await s.api('POST', 'lt/roles/exhaust', { ttl: 600 })).status).toBe(204);
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

it('revokes an exhausted token at its last use, with its leases', async () => {
  const t = (await s.api('POST', 'auth/token/create', { policies: ['lease-user'], num_uses: 3 })).body.auth;
  // A use-limited token may not make children (as in Vault), so nothing escapes that way.
  const child = await s.api('POST', 'auth/token/create', { policies: ['lease-user'] }, { token: t.client_token });
  expect(child.status).toBe(400);
  // Uses 1 (the refused create above) and 2: a leased credential.
  const cred = await s.api('GET', 'lt/creds/exhaust', undefined, { token: t.client_token });
  expect(cred.status).toBe(200);
  const { lease_id: leaseId } = cred.body;
  const username: string = cred.body.data.username;
  expect((await s.api('POST', 'sys/leases/lookup', { lease_id: leaseId })).status).toBe(200);
  expect((await s.api('POST', 'auth/token/lookup-accessor', { accessor: t.accessor })).body.data.num_uses).toBe(1);

  // Use 3, the last: served, then the token is revoked with its lease.
  expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t.client_token })).status).toBe(200);
  expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t.client_token })).status).toBe(403);
  const gone = await s.api('POST', 'auth/token/lookup-accessor', { accessor: t.accessor });
  expect(gone.status).toBe(403);
  await waitFor('the exhausted token lease revoked in the engine', async () => (await records(s)).revoked[username]?.count === 1);
  expect((await s.api('POST', 'sys/leases/lookup', { lease_id: leaseId })).status).toBe(400);
});
