import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { startGateway, UA } from '../helpers/gateway.js';
import { startConsoleGateway } from '../helpers/console-page.js';
import { startRedis } from '../helpers/redis.js';
import { findChromium, launchBrowser } from '../helpers/browser.js';

/**
 * The self-service console in a real headless Chromium (Debian's), against a real gateway on a
 * real Redis with a routes file of its own (no /organization/me: helpers/console-page.ts) and a
 * real upstream: sign in, create a key (no scope ticked for you, 90 days unless chosen otherwise)
 * and read its secret once, use it, roll it, revoke it, see sessions, the audit trail and the
 * organization (from the gateway's own API; its store paused, the 503 and a Retry that works), sign
 * out; a wrong password and the login throttle shown; the CSP present and no console error, and
 * no request leaves the gateway's origin. Each page's screenshot goes to test-output/console/.
 */

const chromium = findChromium();
const SHOTS = new URL('../../test-output/console/', import.meta.url);
const DAY_MS = 86_400_000;

t.test('the console, driven in Chromium', { skip: chromium === undefined ? 'no Chromium found (Debian: apt-get install chromium; .ci/run installs it): browser tests skipped' : false }, async (t) => {
  mkdirSync(SHOTS, { recursive: true });
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const gw = await startConsoleGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url } });
  const org = await gw.createOrganization({ name: 'Console Test Org', email: 'console@example.test' });

  const browser = await launchBrowser(chromium!);
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A refused call shows in Chromium's console as a failed resource load: that is the API answering.
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of (401|404|429|503)/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  // What the page asked to create: the bodies of its POST /auth/api-key.
  const creations: unknown[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/auth/api-key') creations.push(request.postDataJSON());
  });
  const origins = new Set<string>();
  page.on('request', (request) => origins.add(new URL(request.url()).origin));
  // Every answer the page caused that was a 404 (the browser's own /favicon.ico, say).
  const notFound: string[] = [];
  page.on('response', (response) => {
    if (response.status() === 404) notFound.push(new URL(response.url()).pathname);
  });
  const shot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });

  // The page and its headers.
  const answer = await page.goto(`${gw.publicUrl}/console/`);
  t.equal(answer?.status(), 200);
  const headers = answer!.headers();
  t.match(headers['content-security-policy'], /default-src 'none'; script-src 'self'; style-src 'self'.*frame-ancestors 'none'/);
  t.notMatch(headers['content-security-policy'], /unsafe-inline|unsafe-eval/);
  t.equal(headers['x-content-type-options'], 'nosniff');
  t.equal(headers['referrer-policy'], 'no-referrer');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  // Before sign-in nothing of the signed-in page shows: the pages and "Sign out" are hidden (the
  // CSS display of nav must not override the hidden attribute).
  t.equal(await page.locator('#nav').isVisible(), false, 'the navigation is hidden before sign-in');
  t.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0, 'no visible "Sign out" before sign-in');
  t.equal(await page.getByRole('link', { name: 'API keys' }).count(), 0, 'no visible page links before sign-in');
  await shot('1-sign-in');

  // A wrong password: the problem's detail next to the form.
  await page.getByLabel('E-mail').fill(org.email);
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Invalid e-mail or password' }).waitFor();
  t.equal(await page.getByLabel('Password').inputValue(), '', 'the password field is cleared');

  // Signed in with the keyboard only.
  await page.getByLabel('E-mail').fill(org.email);
  await page.getByLabel('Password').focus();
  await page.keyboard.type(org.password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  t.equal(await page.evaluate('document.cookie'), '', 'no cookie');
  t.equal(await page.evaluate('localStorage.length + sessionStorage.length'), 0, 'nothing in web storage');

  // The key form chooses nothing for the person: no scope ticked, "All scopes" a choice of its
  // own, and a finite expiry (90 days) unless another is chosen.
  const scopeBox = (name: string) => page.getByRole('checkbox', { name, exact: true });
  await scopeBox('orders:read').waitFor();
  for (const name of ['orders:read', 'orders:write', 'keys:read', 'keys:write']) t.equal(await scopeBox(name).isChecked(), false, `${name}: not ticked by default`);
  const allScopes = page.getByRole('checkbox', { name: 'All scopes, including any declared later (full access)' });
  t.equal(await allScopes.isChecked(), false, '"All scopes" is not ticked by default');
  t.equal(await page.getByLabel('Expires after').inputValue(), String(90 * 86_400), 'expires after 90 days by default');
  t.equal(await page.locator('#key-lifetime option:checked').textContent(), '90 days');
  t.ok((await page.locator('#key-lifetime option').allTextContents()).includes('Never'), '"Never" can still be chosen');
  await shot('2a-key-form');

  // Nothing chosen: said under the scopes, and nothing sent.
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('alert').filter({ hasText: 'Choose the scopes this key needs' }).waitFor();
  t.same(creations, [], 'no key is asked for without a scope chosen');

  // Create a key with a name, chosen scopes, the default expiry and a rate limit; its secret is shown once.
  await page.getByLabel('Name (optional)').fill('CI deploy');
  await scopeBox('orders:read').check();
  await scopeBox('keys:read').check();
  t.equal(await page.getByText('Choose the scopes this key needs').isVisible(), false, 'the message goes once a scope is chosen');
  await page.getByLabel('Rate limit (optional; at most the organization’s)').fill('100/1m');
  const askedAt = Date.now();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secretField = page.getByLabel('API key', { exact: true });
  await secretField.waitFor();
  const secret = await secretField.inputValue();
  t.match(secret, /^agk_/, 'the new key, shown once');
  t.match(await page.getByText('It is shown only this once').textContent(), /cannot show it again/);
  await shot('2-key-created');
  t.notOk(page.url().includes(secret), 'never in the URL');
  t.same(creations, [{ name: 'CI deploy', scopes: ['orders:read', 'keys:read'], expiresIn: 90 * 86_400, rateLimit: '100/1m' }], 'the chosen scopes and 90 days were asked for');
  const listed = (await fetch(`${gw.publicUrl}/auth/api-key`, { headers: { ...UA, authorization: `Bearer ${await gw.login(org.email, org.password)}` } }).then((r) => r.json())) as { keys: { name: string; scopes: string[]; expiresAt: string }[] };
  const made = listed.keys.find((key) => key.name === 'CI deploy');
  t.same(made?.scopes, ['orders:read', 'keys:read'], 'the key holds those scopes only');
  const lifetime = Date.parse(made!.expiresAt) - askedAt;
  t.ok(lifetime > 90 * DAY_MS - 60_000 && lifetime <= 90 * DAY_MS + 60_000, `and ends in 90 days (${Math.round(lifetime / DAY_MS)})`);

  // The key works, for real, through the gateway, on the routes file's own route.
  const used = await gw.get('/api/v2/orders', { authorization: `Bearer ${secret}` });
  t.equal(used.status, 200, 'the new key is accepted by the gateway');

  await page.getByRole('button', { name: 'I have copied it' }).click();
  await secretField.waitFor({ state: 'detached' });
  t.notOk((await page.content()).includes(secret), 'the secret is gone from the page');
  const row = page.getByRole('row').filter({ hasText: 'CI deploy' });
  await row.filter({ hasText: '100/60s' }).waitFor();
  t.match(await row.textContent(), /orders:read keys:read/);
  t.equal(await scopeBox('orders:read').isChecked(), false, 'the form is back to nothing chosen');
  t.equal(await page.getByLabel('Expires after').inputValue(), String(90 * 86_400), 'and to 90 days');
  await shot('3-keys');

  // "All scopes", said on purpose: the key is given no list (it holds what is declared later too); "Never" chosen on purpose.
  await page.getByLabel('Name (optional)').fill('Full access');
  await allScopes.check();
  t.equal(await scopeBox('orders:write').isChecked(), true, 'every box is ticked with it');
  t.equal(await scopeBox('orders:write').isDisabled(), true, 'and locked');
  await page.getByLabel('Expires after').selectOption({ label: 'Never' });
  await page.getByRole('button', { name: 'Create key' }).click();
  await secretField.waitFor();
  t.same(creations[1], { name: 'Full access' }, 'no scope list and no expiry were sent');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await page.getByRole('row').filter({ hasText: 'Full access' }).waitFor();

  // Roll it, the old key revoked at once: the successor's secret shown once; the old key refused.
  await page.getByRole('button', { name: 'Roll CI deploy' }).click();
  await page.getByLabel('The old key keeps working for').selectOption('0');
  await page.getByRole('button', { name: 'Confirm roll of CI deploy' }).click();
  await secretField.waitFor();
  const successor = await secretField.inputValue();
  t.match(successor, /^agk_/);
  t.not(successor, secret);
  t.equal((await gw.get('/api/v2/orders', { authorization: `Bearer ${secret}` })).status, 401, 'the rolled key is revoked');
  t.equal((await gw.get('/api/v2/orders', { authorization: `Bearer ${successor}` })).status, 200, 'its successor works');
  await page.getByRole('button', { name: 'I have copied it' }).click();

  // Revoke the successor, after a confirmation.
  await page.getByRole('button', { name: 'Revoke CI deploy' }).click();
  await page.getByRole('button', { name: 'Confirm revoking CI deploy' }).click();
  await page.getByText('Revoked CI deploy').waitFor();
  t.equal((await gw.get('/api/v2/orders', { authorization: `Bearer ${successor}` })).status, 401, 'revoked everywhere');

  // Sessions: this one marked.
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  await page.getByText('(this session)').waitFor();
  t.match(await page.getByRole('table').textContent(), /Headless Chrome from 127\.0\.0\.0\/24 \(this session\)/, 'described coarsely');
  await shot('4-sessions');

  // The audit trail: the key's life, newest first.
  await page.getByRole('link', { name: 'Audit trail' }).click();
  await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
  await page.getByText('api_key.deleted').waitFor();
  const trail = await page.getByRole('table').textContent();
  t.ok(trail!.indexOf('api_key.deleted') < trail!.indexOf('api_key.rolled') && trail!.indexOf('api_key.rolled') < trail!.indexOf('api_key.created'), 'newest first');
  t.notOk(trail!.includes(secret) || trail!.includes(successor), 'no secret in the trail');
  await shot('5-audit');

  // The organization, from the gateway's own API (GET /auth/organization): this routes file has no /organization/me.
  await page.getByRole('link', { name: 'Organization' }).click();
  await page.getByText('Console Test Org').waitFor();
  t.match(await page.locator('dl').textContent(), new RegExp(`${org.id}.*Console Test Org.*console@example\\.test`));
  await shot('6-organization');

  // The store not answering: the 503's detail, and a Retry button that works once it answers again.
  redis.pause();
  await page.getByRole('button', { name: 'Reload' }).click();
  await page.getByRole('alert').filter({ hasText: 'The service is busy or unavailable' }).waitFor({ timeout: 20_000 });
  t.match(await page.getByRole('alert').textContent(), /retry in \d+ s\./);
  await shot('6b-store-down');
  redis.resume();
  await page.getByRole('button', { name: 'Retry' }).click();
  await page.getByRole('alert').waitFor({ state: 'detached' });
  t.match(await page.locator('dl').textContent(), /Console Test Org/, 'back after the retry');

  // The session ended elsewhere: the next call returns to sign-in with a message.
  const other = await gw.login(org.email, org.password);
  const everywhere = await fetch(`${gw.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${other}`, 'content-type': 'application/json' }, body: '{"everywhere":true}' });
  t.equal(everywhere.status, 204);
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByText('Your session has ended').waitFor();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();

  // Sign in and out again.
  await page.getByLabel('E-mail').fill(org.email);
  await page.getByLabel('Password').fill(org.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  t.equal(await page.locator('#nav').isVisible(), false, 'the navigation is hidden again after signing out');

  // Throttled: failed sign-ins past the limit show the wait.
  for (let i = 0; i < 12; i++) {
    await page.getByLabel('E-mail').fill(org.email);
    await page.getByLabel('Password').fill(`wrong-${i}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    if (/Try again in \d+ s/.test((await page.getByRole('alert').textContent()) ?? '')) break;
  }
  t.match(await page.getByRole('alert').textContent(), /Too many.*Try again in \d+ s\./, 'the throttle and its wait');
  await shot('7-throttled');

  t.same(notFound.filter((path) => !path.startsWith('/auth/')), [], 'no 404 for anything but the API (no /favicon.ico)');
  // The browser asks for its icon on its own, outside the page's requests: the gateway's log says.
  const unmatched = gw.logs.records().filter((r) => r['route'] === 'unmatched');
  t.same(unmatched, [], 'the browser asked the gateway for nothing it does not serve (no /favicon.ico)');
  t.same(problems, [], 'no console errors');
  t.same([...origins], [gw.publicUrl], 'every request went to the gateway itself');
});

t.test('the console is off in production unless turned on, and serves only its own files', async (t) => {
  const off = await startGateway(t, { env: { NODE_ENV: 'production', AUTHGATE_STORE: 'memory', AUTHGATE_IDENTITY_ASSERTION: 'off', AUTHGATE_TLS: 'offloaded' } });
  t.equal((await off.get('/console/')).status, 404, 'off in production by default');
  const on = await startGateway(t, { env: { AUTHGATE_CONSOLE: 'on' } });
  const page = await on.get('/console/');
  t.equal(page.status, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.equal((await on.get('/console/app.js')).headers['content-type'], 'text/javascript; charset=utf-8');
  // The reset page is a page of its own, asked for without its extension.
  const reset = await on.get('/console/reset');
  t.equal(reset.status, 200, '/console/reset');
  t.match(reset.body, /<script type="module" src="reset\.js"><\/script>/);
  t.equal(reset.headers['content-security-policy'], page.headers['content-security-policy'], 'under the same CSP');
  const redirect = await on.get('/console');
  t.equal(redirect.status, 308);
  t.equal(redirect.headers.location, '/console/');
  for (const path of ['/console/nope.js', '/console/..%2Fpackage.json', '/console/%2e%2e/main.js', '/console/sub/app.js', '/console/nope', '/console/reset.js.html']) {
    const res = await on.get(path);
    t.equal(res.status, 404, path);
    t.match(res.headers['content-type'], /problem\+json/);
  }
  const etag = page.headers['etag'] as string;
  t.equal((await on.get('/console/', { 'if-none-match': etag })).status, 304, 'unchanged: 304');
  t.ok(existsSync(new URL('../../dist/console/app.js', import.meta.url)), 'built by npm run build');
});
