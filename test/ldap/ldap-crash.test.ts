/**
 * A static rotation cut short by a SIGKILL of the ldap plugin process is
 * settled when the process comes back: the password the engine then holds
 * binds, and the one before the rotation no longer does.
 *
 * To stop the rotation in the middle, the test freezes its own dedicated
 * slapd (SIGSTOP) before asking for rotate-role: the engine writes its WAL
 * entry and sends the password change, which the frozen server does not
 * answer; then the plugin is killed and the server thawed. Whether or not
 * the directory applied the change, the restarted engine must end up
 * holding a password that binds.
 */
import { addPerson, binds, dedicatedSlapd, type Slapd } from '../helpers/ldap';
import type { DedicatedService } from '../helpers/services';
import { descendantPids, sleep, waitFor } from '../helpers/processes';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

let s: RunningServer;
let ld: Slapd & { service: DedicatedService };
let dn = '';

beforeAll(async () => {
  ld = dedicatedSlapd();
  dn = await addPerson(ld, `ou=users,${ld.base}`, 'crashy', 'crashy-initial');
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/ldap', { type: 'ldap' })).status).toBe(204);
  // The bind entry is the directory's manager: this slapd is ours alone.
  const cfg = await s.api('POST', 'ldap/config', { binddn: ld.managerDn, bindpass: ld.managerPassword, url: ld.url, userdn: `ou=users,${ld.base}`, request_timeout: 60 });
  expect(cfg.status).toBe(204);
});

afterAll(async () => {
  if (ld?.pid) {
    try {
      process.kill(ld.pid, 'SIGCONT');
    } catch {
      /* already gone */
    }
  }
  await s?.stop();
  ld?.service.drop();
});

it('settles a static rotation cut short by a SIGKILL of the plugin: the password the engine holds binds', async () => {
  expect((await s.api('POST', 'ldap/static-role/crashy', { username: 'crashy', rotation_period: '1h' })).status).toBe(204);
  const before = (await s.api('GET', 'ldap/static-cred/crashy')).body.data;
  expect(await binds(ld, dn, before.password)).toBe(true);
  const [plugin] = descendantPids(s.proc.pid!, 'ldap/dist/plugin.js');
  expect(plugin).toBeDefined();

  process.kill(ld.pid!, 'SIGSTOP');
  let answer: Promise<{ status: number }>;
  try {
    answer = s.api('POST', 'ldap/rotate-role/crashy', {});
    // The WAL entry is written before the directory is asked; the directory never answers.
    await sleep(1500);
    process.kill(plugin!, 'SIGKILL');
    await waitFor('the plugin to die', () => !descendantPids(s.proc.pid!, 'ldap/dist/plugin.js').includes(plugin!));
  } finally {
    process.kill(ld.pid!, 'SIGCONT');
  }
  expect((await answer).status).toBeGreaterThanOrEqual(500);

  // The restarted process settles the rotation at its first tick: the engine's password binds.
  const settled = await waitFor(
    'the rotation to be settled',
    async () => {
      const r = await s.api('GET', 'ldap/static-cred/crashy');
      if (r.status !== 200 || r.body.data.password === before.password) return undefined;
      return (await binds(ld, dn, r.body.data.password)) ? r.body.data : undefined;
    },
    30_000,
  );
  expect(settled.last_password).toBe(before.password);
  expect(await binds(ld, dn, before.password)).toBe(false);
  const [restarted] = descendantPids(s.proc.pid!, 'ldap/dist/plugin.js');
  expect(restarted).toBeDefined();
  expect(restarted).not.toBe(plugin);

  // And the engine goes on rotating from there.
  expect((await s.api('POST', 'ldap/rotate-role/crashy', {})).status).toBe(204);
  const after = (await s.api('GET', 'ldap/static-cred/crashy')).body.data;
  expect(await binds(ld, dn, after.password)).toBe(true);
  expect(await binds(ld, dn, settled.password)).toBe(false);
});
