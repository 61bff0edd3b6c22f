/**
 * The web UI in a real headless Chromium against the real binary (issue 29):
 * serving and its headers, sign-in (token, userpass, AppRole) and sign-out,
 * navigation, a phone-sized screen, kv v2, ACL policies, seal and unseal (last:
 * it seals the server). One dev server and one browser for the file.
 */
import { eventually, signInWithToken, uiSuite } from '../helpers/browser';
import { startConfigServer, startDevServer } from '../helpers/server';

jest.setTimeout(120_000);

const suite = uiSuite(() => startDevServer());

describe('serving', () => {
  it('redirects / to /ui/ and serves the app with a strict CSP, X-Frame-Options DENY and a favicon; the API keeps its own headers', async () => {
    const root = await fetch(`${suite.server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    const page = await fetch(`${suite.server.url}/ui/secrets/secret/app`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    // No inline script: every script is a file of the server's own.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/https?:\/\//);
    const favicon = await fetch(`${suite.server.url}/favicon.ico`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toMatch(/image\//);
    const api = await fetch(`${suite.server.url}/v1/sys/health`);
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBeNull();
    expect(api.headers.get('x-frame-options')).toBeNull();

    await suite.ui.page.goto('/');
    await suite.ui.page.waitForURL('**/ui/sign-in');
    await suite.ui.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await suite.ui.screenshot('sign-in');
  });

  it('is served by a production server only with ui = true in its config', async () => {
    const config = (ui: string) => `${ui}\nstorage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:$PORT"\n  tls_disable = true\n}\n`;
    const off = await startConfigServer(config(''));
    expect((await fetch(`${off.url}/ui/`)).status).toBe(404);
    expect((await fetch(`${off.url}/`, { redirect: 'manual' })).status).toBe(404);
    await off.stop();
    const on = await startConfigServer(config('ui = true'));
    expect((await fetch(`${on.url}/`, { redirect: 'manual' })).headers.get('location')).toBe('/ui/');
    const page = await fetch(`${on.url}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    await on.stop();
  });
});

describe('sign in', () => {
  it('signs in with a token, keeps it in sessionStorage only, lists the mounts and signs out', async () => {
    const { page } = suite.ui;
    await page.goto('/ui/');
    // A wrong token: the server's message, announced.
    await page.getByLabel('Token', { exact: true }).fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /permission denied/ }).waitFor();

    await signInWithToken(page, suite.server.rootToken);
    const nav = page.getByRole('navigation', { name: 'Mounts' });
    await nav.getByRole('link', { name: 'secret/', exact: true }).waitFor();
    await nav.getByRole('link', { name: 'token/', exact: true }).waitFor();
    expect(page.url()).not.toContain(suite.server.rootToken);
    const storage = await page.evaluate(() => ({ local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) }));
    expect(storage.local).not.toContain(suite.server.rootToken);
    expect(storage.session).toContain(suite.server.rootToken);
    await suite.ui.screenshot('signed-in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain(suite.server.rootToken);
    // Signing out forgets the token and revokes nothing.
    expect((await suite.server.api('GET', 'auth/token/lookup-self')).status).toBe(200);
  });
});

describe('sign in with a login', () => {
  it('signs in with userpass at userpass/ and sees only what its policy allows', async () => {
    expect((await suite.server.api('POST', 'sys/auth/userpass', { type: 'userpass' })).status).toBe(204);
    expect((await suite.server.api('PUT', 'sys/policies/acl/kv-reader', { policy: 'path "secret/*" { capabilities = ["read", "list"] }' })).status).toBe(204);
    expect((await suite.server.api('POST', 'auth/userpass/users/alice', { password: 'correct horse battery', token_policies: 'kv-reader' })).status).toBe(204);
    const { page } = suite.ui;
    await page.goto('/ui/');
    await page.getByLabel('Method').selectOption('Username');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Mounts' });
    await nav.getByRole('link', { name: 'secret/', exact: true }).waitFor();
    // The navigation comes from sys/internal/ui/mounts, filtered by the caller's ACL.
    expect(await nav.getByRole('link', { name: 'userpass/', exact: true }).count()).toBe(0);
    const token = JSON.parse((await page.evaluate(() => sessionStorage.getItem('strongroom.session')))!).token as string;
    const self = await suite.server.api('GET', 'auth/token/lookup-self', undefined, { token });
    expect(self.body.data.policies).toContain('kv-reader');
    expect(self.body.data.display_name).toBe('userpass-alice');
  });

  it('signs in with AppRole at the mount path given', async () => {
    expect((await suite.server.api('POST', 'sys/auth/machines', { type: 'approle' })).status).toBe(204);
    expect((await suite.server.api('POST', 'auth/machines/role/web', { token_policies: 'kv-reader' })).status).toBe(204);
    const roleId = (await suite.server.api('GET', 'auth/machines/role/web/role-id')).body.data.role_id as string;
    const secretId = (await suite.server.api('POST', 'auth/machines/role/web/secret-id')).body.data.secret_id as string;
    const { page } = suite.ui;
    await page.goto('/ui/');
    await page.getByLabel('Method').selectOption('AppRole');
    await page.getByLabel('Role ID').fill(roleId);
    await page.getByLabel('Secret ID').fill(secretId);
    await page.getByLabel('Mount path').fill('machines/');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Mounts' }).getByRole('link', { name: 'secret/', exact: true }).waitFor();
    expect(page.url()).not.toContain(secretId);
    const token = JSON.parse((await page.evaluate(() => sessionStorage.getItem('strongroom.session')))!).token as string;
    expect((await suite.server.api('GET', 'auth/token/lookup-self', undefined, { token })).body.data.meta).toMatchObject({ role_name: 'web' });
  });
});

describe('a phone-sized screen', () => {
  it('fits 390 px without sideways scrolling, every control named', async () => {
    const { page } = await suite.reopen({ width: 390, height: 844 });
    await signInWithToken(page, suite.server.rootToken);
    await page.getByRole('navigation', { name: 'Mounts' }).getByRole('link', { name: 'secret/', exact: true }).click();
    await page.getByRole('button', { name: 'Create secret' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // Every button, link, field and select has an accessible name.
    const unnamed = await page.evaluate(() =>
      Array.from(document.querySelectorAll('button, a[href], input, select, textarea'))
        .filter((el) => !(el.getAttribute('aria-label') || (el as HTMLInputElement).labels?.length || el.textContent?.trim() || el.getAttribute('aria-labelledby')))
        .map((el) => el.outerHTML),
    );
    expect(unnamed).toEqual([]);
    await suite.ui.screenshot('phone-kv');
  });
});

describe('kv v2', () => {
  it('creates a secret, reveals it, writes a second version, compares, deletes and undeletes a version, and deletes the secret', async () => {
    const { page } = suite.ui;
    await signInWithToken(page, suite.server.rootToken);
    await page.getByRole('navigation', { name: 'Mounts' }).getByRole('link', { name: 'secret/', exact: true }).click();
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByLabel('Path').fill('app/db');
    await page.getByLabel('Key').last().fill('username');
    await page.getByLabel('Value').last().fill('alice');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.getByLabel('Key').last().fill('password');
    await page.getByLabel('Value').last().fill('hunter2');
    await page.getByRole('button', { name: 'Save' }).click();

    await page.getByRole('heading', { name: 'app/db' }).waitFor();
    const row = page.getByRole('table', { name: 'Version 1' }).getByRole('row', { name: /password/ });
    expect(await row.textContent()).not.toContain('hunter2');
    await row.getByRole('button', { name: 'Reveal' }).click();
    await row.getByText('hunter2').waitFor();
    expect((await suite.server.api('GET', 'secret/data/app/db')).body.data.data).toEqual({ username: 'alice', password: 'hunter2' });

    await page.getByRole('button', { name: 'Create new version' }).click();
    await page.getByLabel('Value').nth(1).fill('correct-horse');
    await page.getByRole('button', { name: 'Save' }).click();
    await eventually(async () => expect(await page.getByLabel('Version', { exact: true }).inputValue()).toBe('2'));
    expect((await suite.server.api('GET', 'secret/data/app/db')).body.data.data.password).toBe('correct-horse');

    await page.getByRole('button', { name: 'Compare versions' }).click();
    const changed = page.getByRole('region', { name: 'Differences between versions' }).getByRole('row', { name: /password/ });
    await changed.getByText('changed', { exact: true }).waitFor();
    await suite.ui.screenshot('kv-secret');

    await page.getByRole('button', { name: 'Delete version' }).click();
    await page.getByRole('button', { name: 'Confirm delete version' }).click();
    await page.getByText('Version 2 is deleted').waitFor();
    expect((await suite.server.api('GET', 'secret/metadata/app/db')).body.data.versions['2'].deletion_time).not.toBe('');
    await page.getByRole('button', { name: 'Undelete version' }).click();
    // The comparison stays open: its rows name the key too, so look in the version's own table.
    await page.getByRole('table', { name: 'Version 2' }).getByRole('row', { name: /password/ }).waitFor();

    await page.getByRole('button', { name: 'Delete secret' }).click();
    await page.getByRole('button', { name: 'Confirm delete secret' }).click();
    await page.getByRole('heading', { name: 'secret/app/' }).waitFor();
    expect((await suite.server.api('GET', 'secret/metadata/app/db')).status).toBe(404);
  });
});

describe('policies', () => {
  it("writes a policy, shows the server's message beside the editor when it is wrong, and saves it once fixed", async () => {
    const { page } = suite.ui;
    await signInWithToken(page, suite.server.rootToken);
    await page.getByRole('navigation', { name: 'System' }).getByRole('link', { name: 'Policies', exact: true }).click();
    await page.getByLabel('Policy name').fill('app-writer');
    await page.getByRole('button', { name: 'Create policy' }).click();
    const editor = page.getByLabel('Policy', { exact: true });
    await editor.fill('path "secret/data/app/*" {\n  capabilities = ["create", "reed"]\n}\n');
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: /unknown capability "reed"/ }).waitFor();
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect((await editor.getAttribute('aria-describedby'))?.split(' ')).toContain(await alert.getAttribute('id'));
    expect((await suite.server.api('GET', 'sys/policies/acl/app-writer')).status).toBe(404);
    await suite.ui.screenshot('policy-error');

    await editor.fill('path "secret/data/app/*" {\n  capabilities = ["create", "read"]\n}\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Policy app-writer saved' }).waitFor();
    expect(await alert.count()).toBe(0);
    expect((await suite.server.api('GET', 'sys/policies/acl/app-writer')).body.data.policy).toContain('"read"');
  });
});

describe('system pages', () => {
  it('enables, tunes and disables a secrets engine, saves a password policy and generates a sample, enables an audit device, creates a namespace and charts the metrics', async () => {
    const { page } = suite.ui;
    const system = page.getByRole('navigation', { name: 'System' });
    await signInWithToken(page, suite.server.rootToken);

    await system.getByRole('link', { name: 'Secrets engines', exact: true }).click();
    const enable = page.getByRole('form', { name: 'Enable a secrets engine' });
    await enable.getByLabel('Type').selectOption('kv');
    await enable.getByLabel('Path').fill('team-kv');
    await enable.getByLabel('Options').fill('version=1');
    await enable.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('navigation', { name: 'Mounts' }).getByRole('link', { name: 'team-kv/', exact: true }).waitFor();
    expect((await suite.server.api('GET', 'sys/mounts/team-kv')).body.data).toMatchObject({ type: 'kv', options: { version: '1' } });
    await page.getByRole('button', { name: 'Tune team-kv/' }).click();
    await page.getByLabel('Max lease TTL').fill('2h');
    await page.getByRole('button', { name: 'Save tuning' }).click();
    await page.getByRole('status').filter({ hasText: 'team-kv/ tuned' }).waitFor();
    expect((await suite.server.api('GET', 'sys/mounts/team-kv/tune')).body.data.max_lease_ttl).toBe(7200);
    await page.getByRole('button', { name: 'Disable team-kv/' }).click();
    await page.getByRole('button', { name: 'Confirm disable team-kv/' }).click();
    await page.getByRole('status').filter({ hasText: 'team-kv/ disabled' }).waitFor();
    expect((await suite.server.api('GET', 'sys/mounts/team-kv')).status).toBe(404);

    await system.getByRole('link', { name: 'Password policies' }).click();
    await page.getByLabel('Policy name').fill('pins');
    await page.getByRole('button', { name: 'New policy' }).click();
    await page.getByLabel('Policy', { exact: true }).fill('length = 6\nrule "charset" {\n  charset = "0123456789"\n  min-chars = 6\n}\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Generate a sample' }).click();
    await page.getByRole('button', { name: 'Reveal' }).click();
    await eventually(async () => expect(await page.getByRole('form', { name: 'Password policy pins' }).locator('code').textContent()).toMatch(/^\d{6}$/));

    await system.getByRole('link', { name: 'Audit devices' }).click();
    await page.getByText('No audit device is enabled').waitFor();
    await page.getByLabel('Options').fill('file_path=discard');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('row', { name: /file\/.*file_path=discard/ }).waitFor();
    expect(Object.keys((await suite.server.api('GET', 'sys/audit')).body.data)).toEqual(['file/']);
    await page.getByRole('button', { name: 'Disable file/' }).click();
    await page.getByRole('button', { name: 'Confirm disable file/' }).click();
    await page.getByText('No audit device is enabled').waitFor();

    await system.getByRole('link', { name: 'Namespaces' }).click();
    await page.getByLabel('Namespace name').fill('acme');
    await page.getByRole('button', { name: 'Create namespace' }).click();
    await page.getByRole('row', { name: /acme\// }).waitFor();
    expect((await suite.server.api('GET', 'sys/namespaces/acme')).status).toBe(200);

    await system.getByRole('link', { name: 'Status' }).click();
    await page.getByRole('img', { name: /^Leases: \d+ leases/ }).waitFor();
    await page.getByRole('img', { name: /^Requests per second: [\d.]+ req\/s/ }).waitFor({ timeout: 15_000 });
    await suite.ui.screenshot('status');
  });
});

describe('seal', () => {
  it('seals the server and unseals it with its key share', async () => {
    const { page } = suite.ui;
    await signInWithToken(page, suite.server.rootToken);
    await page.getByRole('navigation', { name: 'System' }).getByRole('link', { name: 'Seal', exact: true }).click();
    await page.getByText('unsealed', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Seal', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm seal' }).click();
    await page.getByLabel('Key share').waitFor();
    expect((await suite.server.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    await page.getByText('0 of 1 key shares entered').waitFor();
    await suite.ui.screenshot('sealed');

    await page.getByLabel('Key share').fill(suite.server.unsealKey);
    await page.getByRole('button', { name: 'Unseal' }).click();
    await page.getByText('unsealed', { exact: true }).waitFor();
    expect((await suite.server.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
    // The session goes on: the token still works once unsealed.
    await page.getByRole('navigation', { name: 'Mounts' }).getByRole('link', { name: 'secret/', exact: true }).click();
    await page.getByRole('button', { name: 'Create secret' }).waitFor();
  });
});
