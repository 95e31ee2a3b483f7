/**
 * What the console's browser tests share: Debian's Chromium (or a skip reason), the console's
 * strict CSP as served, where screenshots go, a page that records page errors, console errors
 * (but an API refusal's, which the page shows on purpose) and every request's URL, the
 * sign-in and sign-out steps, and the gateway they drive: one with a routes file of its own.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Test } from 'tap';
import { findChromium, launchBrowser } from './browser.js';
import { startGateway, type StartedGateway } from './gateway.js';

export const chromium = findChromium();
export const skip = chromium === undefined ? 'no Chromium found (Debian: apt-get install chromium): browser tests skipped' : false;
export const STRICT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const SHOTS = new URL('../../test-output/console/', import.meta.url);

export type WatchedPage = { browser: Browser; page: Page; problems: string[]; urls: string[]; shot(name: string): Promise<unknown> };

/** A new page in a new browser (closed at teardown); `refusals` are the API statuses whose console error is expected. */
export async function openWatchedPage(t: Test, refusals: readonly number[]): Promise<WatchedPage> {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launchBrowser(chromium!);
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const problems: string[] = [];
  const expected = new RegExp(`Failed to load resource: the server responded with a status of (${refusals.join('|')})`);
  page.on('console', (message) => {
    if (message.type() === 'error' && !expected.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  return { browser, page, problems, urls, shot: (name) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true }) };
}

export async function signInWithPassword(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

/**
 * The routes file the console's browser tests run with: an API of its own, nothing of the
 * built-in table (no `/accounts`, no `/organization/me`), so the console is seen to need only the
 * gateway's own API, whatever the operator's routes are (issue 46).
 */
export const CONSOLE_ROUTES_YAML = `version: 1
scopes:
  orders:read: "Read orders"
  orders:write: "Change orders"
routes:
  - id: orders
    path: /api/v2/orders
    match: subtree
    methods: { GET: orders:read, POST: orders:write }
  - id: status
    path: /status
    match: exact
    credentials: none
    methods: { GET: public }
`;

/** A gateway with the console on and CONSOLE_ROUTES_YAML as its AUTHGATE_ROUTES_FILE (a real file), closed at teardown. */
export async function startConsoleGateway(t: Test, options: Parameters<typeof startGateway>[1] = {}): Promise<StartedGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-console-routes-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, CONSOLE_ROUTES_YAML);
  return startGateway(t, { ...options, env: { AUTHGATE_CONSOLE: 'on', AUTHGATE_ROUTES_FILE: file, ...options.env } });
}
