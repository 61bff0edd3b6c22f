/**
 * The static-role credential read and rotate-role paths, served once by the
 * kit for every engine with static roles (database, LDAP).
 */
import { defineBackend } from '../define-backend.js';
import { createTestBackend } from '../harness.js';
import { staticCredentialPaths, type StaticCredentialRole } from './rotation.js';

interface Role extends StaticCredentialRole {
  dn: string;
}

describe('staticCredentialPaths', () => {
  const roles = new Map<string, Role>([['app', { name: 'app', username: 'app_user', password: 'pw-1', rotation_period: 60, last_rotation: Date.UTC(2026, 0, 1), dn: 'cn=app' }]]);
  const rotated: string[] = [];
  const rotation = {
    ttl: (r: Role) => (r.name === 'app' ? 42 : 0),
    rotate: async (name: string) => void rotated.push(name),
  };
  const backend = (show?: (r: Role) => Record<string, unknown>) =>
    createTestBackend(
      defineBackend({
        type: 'secret',
        help: 'test',
        paths: staticCredentialPaths<Role>({ roles: { get: async (n) => roles.get(n) ?? null }, rotation, credentials: 'static-cred', param: 'role_name', ...(show ? { show } : {}) }),
      }),
    );

  it('reads the current credentials, with what the engine adds', async () => {
    const t = await backend((r) => ({ dn: r.dn }));
    expect((await t.read('static-cred/app'))?.data).toEqual({
      dn: 'cn=app',
      username: 'app_user',
      password: 'pw-1',
      last_service_rotation: '2026-01-01T00:00:00.000Z',
      rotation_period: 60,
      ttl: 42,
    });
  });

  it('rotates a role now, and answers 404 for an unknown one on both paths', async () => {
    const t = await backend();
    expect(await t.write('rotate-role/app', {})).toBeNull();
    expect(rotated).toEqual(['app']);
    for (const call of [() => t.read('static-cred/nope'), () => t.write('rotate-role/nope', {})]) {
      await expect(call()).rejects.toMatchObject({ status: 404, message: 'unknown static role: nope' });
    }
    expect(rotated).toEqual(['app']);
  });
});
