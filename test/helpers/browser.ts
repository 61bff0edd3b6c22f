/**
 * A real browser for the web UI's tests: Debian's Chromium (installed by
 * scripts/services when missing, never a downloaded build), headless, driven
 * by playwright-core. One browser per test file; each test gets a fresh
 * context (its own sessionStorage). A test fails on the first console error
 * or uncaught page error, and saves a screenshot to the test output.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { RunningServer } from './server';
import { sharedService } from './services';

/** Where screenshots go: STRONGROOM_TEST_OUTPUT, else test-output/ at the checkout's root. */
const OUTPUT_DIR = resolve(process.env.STRONGROOM_TEST_OUTPUT ?? resolve(__dirname, '../../test-output'), 'ui');

async function launchBrowser(): Promise<Browser> {
  const executablePath = sharedService('chromium', 'STRONGROOM_TEST_CHROMIUM').STRONGROOM_TEST_CHROMIUM!;
  // Root (as in CI) cannot use Chromium's sandbox; the pages are our own, served on loopback.
  return chromium.launch({ executablePath, headless: true, chromiumSandbox: false, args: ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'] });
}

export interface UiPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and page errors seen so far, in order. */
  errors: string[];
  /** Fails with the first console error seen, if any. */
  assertNoErrors(): void;
  /** Saves a full-page screenshot to OUTPUT_DIR/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A page on `baseUrl` at 1280 px (or `width`). Console errors are recorded
 * as they happen, with the page's URL; `assertNoErrors()` (also run by
 * close()) fails the test with the first. A request the test expects to be
 * refused by the API is not a console error of the page: Chromium logs every
 * response with an error status ("Failed to load resource"), so those are
 * recorded unless they are an API call's 4xx answer (which the UI shows in
 * role="alert"): a 5xx, or any failure of the UI's own files or the favicon,
 * fails the test.
 */
async function openPage(browser: Browser, baseUrl: string, opts: { width?: number; height?: number } = {}): Promise<UiPage> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 }, baseURL: baseUrl });
  const page = await context.newPage();
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const where = msg.location().url;
    if (/Failed to load resource: .* status of 4\d\d/.test(msg.text()) && new URL(where || baseUrl, baseUrl).pathname.startsWith('/v1/')) return;
    errors.push(`console error on ${page.url()}: ${msg.text()} (${where})`);
  });
  page.on('pageerror', (err) => errors.push(`uncaught error on ${page.url()}: ${err.message}`));
  const assertNoErrors = () => {
    if (errors.length) throw new Error(errors[0]);
  };
  return {
    page,
    context,
    errors,
    assertNoErrors,
    async screenshot(name) {
      const path = join(OUTPUT_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      // The page as the test left it, for whoever reads a failure.
      const test = expect.getState().currentTestName ?? 'test';
      await page.screenshot({ path: join(OUTPUT_DIR, `last-${test.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 80)}.png`), fullPage: true }).catch(() => undefined);
      await context.close();
      assertNoErrors();
    },
  };
}

/** Signs in with a token through the sign-in form and waits for the "Mounts" navigation. */
export async function signInWithToken(page: Page, token: string, namespace = ''): Promise<void> {
  await page.goto('/ui/');
  await page.getByLabel('Method').selectOption('Token');
  await page.getByLabel('Token', { exact: true }).fill(token);
  if (namespace) await page.getByLabel('Namespace').fill(namespace);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Mounts' }).waitFor();
}

/** Retries `check` (an assertion) until it passes or `timeoutMs` runs out, as Playwright's own waits do. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * A browser test file's set-up: one server and one browser for the file, a
 * fresh page (context) per test, closed (and checked for console errors) after it.
 */
export function uiSuite(start: () => Promise<RunningServer>): { readonly server: RunningServer; readonly ui: UiPage; reopen(opts: { width?: number; height?: number }): Promise<UiPage> } {
  let server: RunningServer;
  let browser: Browser;
  let ui: UiPage;
  beforeAll(async () => {
    [server, browser] = await Promise.all([start(), launchBrowser()]);
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
  return {
    get server() {
      return server;
    },
    get ui() {
      return ui;
    },
    /** Closes this test's page and opens another (a phone-sized one, say). */
    async reopen(opts) {
      await ui.close();
      ui = await openPage(browser, server.url, opts);
      return ui;
    },
  };
}
