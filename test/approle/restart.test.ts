/**
 * The first login after a restart: the auth method's plugin is still starting
 * when the server unseals, and its login path is unauthenticated only once the
 * plugin has described it. A SecretID made before the restart logs in at once.
 */
import { restartUnsealed, startUnsealedLevelServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer & { configFile: string };
afterAll(async () => {
  await s?.stop();
});

it('logs in with a SecretID made before the restart, on the first request after unseal', async () => {
  s = await startUnsealedLevelServer();
  expect((await s.api('POST', 'sys/auth/approle', { type: 'approle' })).status).toBe(204);
  expect((await s.api('POST', 'auth/approle/role/a', { token_ttl: '1h' })).status).toBe(204);
  const roleId = (await s.api('GET', 'auth/approle/role/a/role-id')).body.data.role_id as string;
  const secretId = (await s.api('POST', 'auth/approle/role/a/secret-id', {})).body.data.secret_id as string;
  expect((await s.api('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null })).status).toBe(200);

  await s.stop();
  s = await restartUnsealed(s);
  const first = await s.api('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null });
  expect(first.status).toBe(200);
  expect(first.body.auth.client_token).toMatch(/^srs\./);
});
