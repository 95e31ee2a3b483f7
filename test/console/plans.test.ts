import t from 'tap';
import { ADMIN_TOKEN, send, startGateway } from '../helpers/gateway.js';
import { findChromium, launchBrowser } from '../helpers/browser.js';
import { PLANS_FILE } from '../helpers/plans.js';
import { compiledTable } from '../helpers/route-tables.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * The console's key form under plans (issue 47), in a real headless Chromium against a real
 * gateway: it offers only the scopes of the organization's plan (GET /auth/scopes), a key made
 * from it holds the plan's, and after the operator moves the organization the form offers the new
 * plan's.
 */

const chromium = findChromium();

t.test('the key form offers only the plan\'s scopes', { skip: chromium === undefined ? 'no Chromium found: browser tests skipped' : false }, async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_CONSOLE: 'on' }, upstream, deps: { routes: compiledTable(PLANS_FILE, upstream.url) } });
  const org = await gw.createOrganization();

  const browser = await launchBrowser(chromium!);
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  // The console keeps its token in memory only: each load signs in.
  const signIn = async () => {
    await page.goto(`${gw.publicUrl}/console/`);
    await page.getByLabel('E-mail').fill(org.email);
    await page.getByLabel('Password').fill(org.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  };
  await signIn();
  const offered = async () => {
    // The scopes' boxes, without "All scopes" (which stands for every one the plan allows, present and future).
    await page.locator('fieldset.scopes input[type=checkbox]:not(#scope-all)').first().waitFor();
    return page.locator('fieldset.scopes input[type=checkbox]:not(#scope-all)').evaluateAll((boxes) => boxes.map((box) => (box as unknown as { value: string }).value));
  };
  t.strictSame(await offered(), ['accounts:read', 'keys:read', 'keys:write'], "the basic plan's scopes only: no accounts:write, no organization:read");

  await page.getByLabel('accounts:read', { exact: true }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secretField = page.getByLabel('API key', { exact: true });
  await secretField.waitFor();
  const secret = await secretField.inputValue();
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${secret}` })).status, 200, 'the key made from the form reads');
  t.equal((await send(`${gw.publicUrl}/accounts`, { method: 'POST', headers: { 'user-agent': 'authgate-tests/1.0', authorization: `Bearer ${secret}` } })).status, 403, 'and cannot write');
  await page.getByRole('button', { name: 'I have copied it' }).click();

  const moved = await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'full' }) });
  t.equal(moved.status, 200);
  await signIn();
  t.strictSame(await offered(), ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'], 'moved to full: every scope offered');
});
