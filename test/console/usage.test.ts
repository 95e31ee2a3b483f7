import t from 'tap';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { startGateway } from '../helpers/gateway.js';
import { chromium, openWatchedPage, signInWithPassword, skip, STRICT_CSP } from '../helpers/console-page.js';
import { compiledTable } from '../helpers/route-tables.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Issue 47: the console's Usage page in a real Chromium, against figures made by real requests
 * through a real gateway to a real upstream: today's row of the table is the requests made, by
 * outcome, the chart is drawn (uPlot's canvas) under the strict CSP without an error, the quota is
 * said, and the key filter shows one key's figures.
 */

t.test('the Usage page: requests per day by outcome, the quota, a key filter', { skip }, async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const routes = compiledTable({ ...BUILTIN_ROUTES_FILE, plans: { metered: { scopes: 'all', quota: { requests: 50, per: 'day' } } }, defaultPlan: 'metered' }, upstream.url);
  const gw = await startGateway(t, { env: { AUTHGATE_CONSOLE: 'on' }, upstream, deps: { routes } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const a = await gw.createApiKey(token);
  const b = await gw.createApiKey(token);
  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
  for (let i = 0; i < 7; i++) t.equal((await gw.get('/accounts', bearer(a.apiKey))).status, 200);
  for (let i = 0; i < 3; i++) t.equal((await gw.get('/accounts', bearer(b.apiKey))).status, 200);
  const narrow = await fetch(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json', 'user-agent': 'authgate-tests/1.0' }, body: JSON.stringify({ name: 'narrow', scopes: ['organization:read'] }) });
  t.equal(narrow.status, 201);
  const narrowKey = (await narrow.json()) as { apiKey: string };
  t.equal((await gw.get('/accounts', bearer(narrowKey.apiKey))).status, 403);
  await gw.gateway.quotas.usage.flush();
  // What the replica leased ahead, given back (as after 5 idle seconds): `used` is then the requests admitted.
  await gw.gateway.quotas.keeper.close();

  const { page, problems, shot } = await openWatchedPage(t, []);
  const answer = await page.goto(`${gw.publicUrl}/console/#usage`);
  t.equal(answer?.headers()['content-security-policy'], STRICT_CSP, 'the strict CSP');
  await signInWithPassword(page, org.email, org.password);
  await page.getByRole('heading', { name: 'Usage' }).waitFor({ timeout: 20_000 });
  const today = new Date().toISOString().slice(0, 10);
  const todayRow = page.locator('#usage-table tbody tr').last();
  // Waits by locators (the strict CSP refuses the string evaluation waitForFunction polls with).
  await page.locator('#usage-table tbody tr').nth(29).waitFor({ timeout: 20_000 });
  const cells = async () => (await todayRow.locator('th, td').allTextContents()).map((text) => text.trim());
  t.strictSame(await cells(), [today, '10', '0', '1', '0', '0', '11'], 'today: 10 admitted, 1 refused for scope');
  t.match(await page.locator('#usage-quota').textContent(), /Quota \(plan metered\): 10 of 50 requests used this day \(UTC\), 40 left\./);
  t.equal(await page.locator('.usage-chart canvas').count(), 1, 'the chart is drawn');
  t.ok(await page.getByRole('img', { name: /Requests per day/ }).isVisible(), 'described for screen readers, the numbers in the table');
  await shot('usage');

  await page.getByLabel('API key').selectOption(a.id);
  await page.locator('#usage-table tbody tr:last-child td').first().filter({ hasText: /^7$/ }).waitFor({ timeout: 20_000 });
  t.strictSame(await cells(), [today, '7', '0', '0', '0', '0', '7'], 'key A alone: its 7');
  t.same(problems, [], 'no page or console error (a CSP refusal would be one)');
});
