/**
 * The web UI on engines, in a real headless Chromium against the real binary
 * and real plugin processes (issue 29): transit's playground, a third party's
 * plugin used through pages generated from its description alone, and
 * PostgreSQL credentials from the shared real server with their lease's live
 * countdown and revocation. One dev server and one browser for the file.
 */
import { resolve } from 'node:path';
import { Client } from 'pg';
import { postgresUrl } from '../helpers/databases';
import { eventually, signInWithToken, uiSuite } from '../helpers/browser';
import { externalPlugin } from '../helpers/plugins';
import { scratchDir, startDevServer } from '../helpers/server';

jest.setTimeout(120_000);

const INVENTORY_MAIN = resolve(__dirname, '../fixtures/inventory-plugin/dist/main.js');
const pluginDir = scratchDir('sr-ui-plugins-');

const suite = uiSuite(() => startDevServer({ extraArgs: [`-dev-plugin-dir=${pluginDir}`] }));

const mountsNav = () => suite.ui.page.getByRole('navigation', { name: 'Mounts' });

describe('transit', () => {
  it('creates a key, encrypts text and decrypts it back, and encrypts base64', async () => {
    expect((await suite.server.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
    const { page } = suite.ui;
    await signInWithToken(page, suite.server.rootToken);
    await mountsNav().getByRole('link', { name: 'transit/', exact: true }).click();
    await page.getByLabel('Key name').fill('orders');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('list', { name: 'Keys' }).getByRole('link', { name: 'orders' }).waitFor();
    expect((await suite.server.api('GET', 'transit/keys/orders')).status).toBe(200);

    await page.getByLabel('Plaintext').fill('the eagle lands at noon');
    await page.getByRole('button', { name: 'Encrypt', exact: true }).click();
    const ciphertext = (await page.getByRole('status', { name: 'Ciphertext' }).textContent()) ?? '';
    expect(ciphertext).toMatch(/^service:v1:/);
    // The server decrypts what the UI encrypted.
    const check = await suite.server.api('POST', 'transit/decrypt/orders', { ciphertext });
    expect(Buffer.from(check.body.data.plaintext, 'base64').toString()).toBe('the eagle lands at noon');

    await page.getByLabel('Operation').selectOption('Decrypt');
    await page.getByLabel('Ciphertext').fill(ciphertext);
    await page.getByRole('button', { name: 'Decrypt', exact: true }).click();
    await eventually(async () => expect(await page.getByRole('status', { name: 'Plaintext as text' }).textContent()).toBe('the eagle lands at noon'));
    await suite.ui.screenshot('transit-decrypt');

    await page.getByLabel('Operation').selectOption('Encrypt');
    await page.getByLabel('Base64').check();
    await page.getByLabel('Plaintext').fill(Buffer.from([0, 1, 2, 255]).toString('base64'));
    await page.getByRole('button', { name: 'Encrypt', exact: true }).click();
    const binary = (await page.getByRole('status', { name: 'Ciphertext' }).textContent()) ?? '';
    const back = await suite.server.api('POST', 'transit/decrypt/orders', { ciphertext: binary });
    expect(Buffer.from(back.body.data.plaintext, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
  });
});

describe('a third-party plugin', () => {
  it('gets list, form and read pages from its description, with field errors beside the field and secret values masked', async () => {
    const plugin = externalPlugin(pluginDir, 'inventory', INVENTORY_MAIN);
    expect((await suite.server.api('POST', 'sys/plugins/catalog/secret/inventory', { command: plugin.command, sha256: plugin.sha256, version: 'v1.0.0' })).status).toBe(204);
    expect((await suite.server.api('POST', 'sys/mounts/stock', { type: 'inventory', description: 'what we own' })).status).toBe(204);
    const { page } = suite.ui;
    await signInWithToken(page, suite.server.rootToken);
    await mountsNav().getByRole('link', { name: 'stock/', exact: true }).click();
    await page.getByRole('heading', { name: 'stock/', exact: true }).waitFor();
    await page.getByRole('link', { name: 'items/' }).click();
    await page.getByText('No entries.').waitFor();
    await page.getByLabel('New entry').fill('laptop-7');
    await page.getByRole('button', { name: 'Create', exact: true }).click();

    // The form comes from the plugin's fields: types, defaults, descriptions.
    await page.getByRole('heading', { name: 'stock/items/laptop-7' }).waitFor();
    expect(await page.getByLabel('quantity', { exact: true }).inputValue()).toBe('1');
    expect(await page.getByLabel('kind', { exact: true }).inputValue()).toBe('hardware');
    expect(await page.getByLabel('active', { exact: true }).isChecked()).toBe(true);
    expect(await page.getByLabel('serial', { exact: true }).getAttribute('type')).toBe('password');
    expect(await page.getByLabel('owner', { exact: true }).getAttribute('aria-describedby')).toBeTruthy();
    await page.getByText('Who holds the item (required to write).').waitFor();

    // A value the server refuses: its message beside the field it names.
    await page.getByLabel('owner', { exact: true }).fill('ops');
    await page.getByLabel('quantity', { exact: true }).fill('-3');
    await page.getByLabel('serial', { exact: true }).fill('SN-4711-XYZ');
    await page.getByRole('button', { name: 'Save' }).click();
    const quantityError = page.getByRole('alert').filter({ hasText: /quantity/ });
    await quantityError.waitFor();
    expect(await quantityError.textContent()).toMatch(/at least 0/);
    const describedBy = (await page.getByLabel('quantity', { exact: true }).getAttribute('aria-describedby')) ?? '';
    expect(describedBy).toContain((await quantityError.getAttribute('id')) ?? 'missing');
    expect(await page.getByLabel('quantity', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await suite.ui.screenshot('plugin-field-error');

    await page.getByLabel('quantity', { exact: true }).fill('3');
    await page.getByLabel('kind', { exact: true }).selectOption('license');
    await page.getByLabel('tags', { exact: true }).fill('blue\nspare');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Current values' }).waitFor();
    expect((await suite.server.api('GET', 'stock/items/laptop-7')).body.data).toEqual({ owner: 'ops', quantity: 3, kind: 'license', tags: ['blue', 'spare'], active: true, serial: 'SN-4711-XYZ' });

    // The read view masks the sensitive field until revealed.
    const values = page.getByRole('region', { name: 'Current values' });
    expect(await values.textContent()).not.toContain('SN-4711-XYZ');
    await values.getByRole('button', { name: 'Reveal' }).click();
    await values.getByText('SN-4711-XYZ').waitFor();
    await suite.ui.screenshot('plugin-read');

    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'items' }).click();
    await page.getByRole('list', { name: 'Entries of stock/items/' }).getByRole('link', { name: 'laptop-7' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page.getByText('No entries.').waitFor();
    expect((await suite.server.api('GET', 'stock/items/laptop-7')).status).toBe(404);
  });
});

describe('PostgreSQL credentials', () => {
  it('issues credentials that log in, shows the lease counting down, and revokes it (the user is dropped)', async () => {
    const superUrl = new URL(postgresUrl());
    const query = async (sql: string, params: unknown[] = []) => {
      const c = new Client({ connectionString: superUrl.href, connectionTimeoutMillis: 5000 });
      await c.connect();
      try {
        return (await c.query(sql, params)).rows as Array<Record<string, unknown>>;
      } finally {
        await c.end();
      }
    };
    expect((await suite.server.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
    const conn = await suite.server.api('POST', 'database/config/pg', {
      plugin_name: 'postgresql-database-plugin',
      connection_url: `postgresql://{{username}}:{{password}}@${superUrl.host}${superUrl.pathname}`,
      username: decodeURIComponent(superUrl.username),
      password: decodeURIComponent(superUrl.password),
      allowed_roles: ['ui-readonly'],
    });
    expect([conn.status, conn.text]).toEqual([204, '']);
    expect(
      (
        await suite.server.api('POST', 'database/roles/ui-readonly', {
          db_name: 'pg',
          default_ttl: '1h',
          max_ttl: '2h',
          creation_statements: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
          revocation_statements: [`DROP ROLE IF EXISTS "{{name}}"`],
        })
      ).status,
    ).toBe(204);

    const { page } = suite.ui;
    await signInWithToken(page, suite.server.rootToken);
    await mountsNav().getByRole('link', { name: 'database/', exact: true }).click();
    const creds = page.getByRole('form', { name: 'creds/{name}', exact: true });
    await creds.getByLabel('name').fill('ui-readonly');
    await creds.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('button', { name: 'Get credentials' }).click();

    const values = page.getByRole('region', { name: 'Current values' });
    await values.getByText('username').waitFor();
    const username = (await values.getByRole('definition').first().textContent())!;
    expect(username).toMatch(/^v-root-ui-reado/);
    const password = values.getByRole('definition').nth(1);
    expect(await password.locator('code').textContent()).toBe('••••••••');
    await password.getByRole('button', { name: 'Reveal' }).click();
    const secret = (await password.locator('code').textContent())!;
    // The credential works on the real suite.server.
    const login = new Client({ connectionString: `postgresql://${encodeURIComponent(username)}:${encodeURIComponent(secret)}@${superUrl.host}${superUrl.pathname}`, connectionTimeoutMillis: 5000 });
    await login.connect();
    expect((await login.query('SELECT current_user AS u')).rows[0].u).toBe(username);
    await login.end();

    // The countdown runs: a second later it shows less time than before.
    const timer = page.getByRole('timer');
    const first = (await timer.textContent())!;
    expect(first).toMatch(/^(59m|1h 00m)/);
    await eventually(async () => expect(await timer.textContent()).not.toBe(first), 5000);
    await suite.ui.screenshot('database-credentials');

    await page.getByRole('button', { name: 'Renew' }).click();
    await page.getByRole('status').filter({ hasText: 'Lease renewed' }).waitFor();
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'Lease revoked' }).waitFor();
    await eventually(async () => expect(await query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username])).toHaveLength(0));
  });
});
