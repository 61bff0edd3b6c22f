/**
 * The web UI in a real headless Chromium against the real binary (issue 29):
 * serving and its headers, sign-in and sign-out, navigation, kv v2, ACL
 * policies, seal and unseal. One dev server and one browser for the file.
 */
import type { Browser } from 'playwright-core';
import { eventually, launchBrowser, openPage, signInWithToken, type UiPage } from '../helpers/browser';
import { startConfigServer, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let server: RunningServer;
let browser: Browser;
let ui: UiPage;

beforeAll(async () => {
  [server, browser] = await Promise.all([startDevServer(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  ui = await openPage(browser, server.url);
});
afterEach(async () => {
  await ui.close();
});

describe('serving', () => {
  it('redirects / to /ui/ and serves the app with a strict CSP, X-Frame-Options DENY and a favicon; the API keeps its own headers', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    const page = await fetch(`${server.url}/ui/secrets/secret/app`);
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
    const favicon = await fetch(`${server.url}/favicon.ico`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toMatch(/image\//);
    const api = await fetch(`${server.url}/v1/sys/health`);
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBeNull();
    expect(api.headers.get('x-frame-options')).toBeNull();

    await ui.page.goto('/');
    await ui.page.waitForURL('**/ui/sign-in');
    await ui.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await ui.screenshot('sign-in');
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
    const { page } = ui;
    await page.goto('/ui/');
    // A wrong token: the server's message, announced.
    await page.getByLabel('Token', { exact: true }).fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /permission denied/ }).waitFor();

    await signInWithToken(page, server.rootToken);
    const nav = page.getByRole('navigation', { name: 'Mounts' });
    await nav.getByRole('link', { name: 'secret/', exact: true }).waitFor();
    await nav.getByRole('link', { name: 'token/', exact: true }).waitFor();
    expect(page.url()).not.toContain(server.rootToken);
    const storage = await page.evaluate(() => ({ local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) }));
    expect(storage.local).not.toContain(server.rootToken);
    expect(storage.session).toContain(server.rootToken);
    await ui.screenshot('signed-in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain(server.rootToken);
    // Signing out forgets the token and revokes nothing.
    expect((await server.api('GET', 'auth/token/lookup-self')).status).toBe(200);
  });
});

describe('kv v2', () => {
  it('creates a secret, reveals it, writes a second version, compares, deletes and undeletes a version, and deletes the secret', async () => {
    const { page } = ui;
    await signInWithToken(page, server.rootToken);
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
    const row = page.getByRole('row', { name: /password/ });
    expect(await row.textContent()).not.toContain('hunter2');
    await row.getByRole('button', { name: 'Reveal' }).click();
    await row.getByText('hunter2').waitFor();
    expect((await server.api('GET', 'secret/data/app/db')).body.data.data).toEqual({ username: 'alice', password: 'hunter2' });

    await page.getByRole('button', { name: 'Create new version' }).click();
    await page.getByLabel('Value').nth(1).fill('correct-horse');
    await page.getByRole('button', { name: 'Save' }).click();
    await eventually(async () => expect(await page.getByLabel('Version', { exact: true }).inputValue()).toBe('2'));
    expect((await server.api('GET', 'secret/data/app/db')).body.data.data.password).toBe('correct-horse');

    await page.getByRole('button', { name: 'Compare versions' }).click();
    const changed = page.getByRole('region', { name: 'Differences between versions' }).getByRole('row', { name: /password/ });
    await changed.getByText('changed', { exact: true }).waitFor();
    await ui.screenshot('kv-secret');

    await page.getByRole('button', { name: 'Delete version' }).click();
    await page.getByRole('button', { name: 'Confirm delete version' }).click();
    await page.getByText('Version 2 is deleted').waitFor();
    expect((await server.api('GET', 'secret/metadata/app/db')).body.data.versions['2'].deletion_time).not.toBe('');
    await page.getByRole('button', { name: 'Undelete version' }).click();
    await page.getByRole('row', { name: /password/ }).waitFor();

    await page.getByRole('button', { name: 'Delete secret' }).click();
    await page.getByRole('button', { name: 'Confirm delete secret' }).click();
    await page.getByRole('heading', { name: 'secret/app/' }).waitFor();
    expect((await server.api('GET', 'secret/metadata/app/db')).status).toBe(404);
  });
});
