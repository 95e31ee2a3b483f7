import t from 'tap';
import { startConsoleGateway } from '../helpers/console-page.js';
import { findChromium, launchBrowser } from '../helpers/browser.js';

/**
 * Issue 26: the console's page lookup took inherited names (`'constructor' in PAGES`), so
 * `#constructor` or `#toString` after sign-in crashed the page. Any fragment that is no page of
 * its own shows the keys page, in a real Chromium, with no page error.
 */

const chromium = findChromium();

t.test('inherited names in the fragment show the keys page, no crash', { skip: chromium === undefined ? 'no Chromium found: browser tests skipped' : false }, async (t) => {
  const gw = await startConsoleGateway(t);
  const org = await gw.createOrganization();
  const browser = await launchBrowser(chromium!);
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));

  // Signed in on #constructor: the page after sign-in is chosen by that fragment.
  await page.goto(`${gw.publicUrl}/console/#constructor`);
  await page.getByLabel('E-mail').fill(org.email);
  await page.getByLabel('Password').fill(org.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor({ timeout: 20_000 });
  t.same(errors, [], 'no page error after sign-in on #constructor');

  for (const name of ['toString', '__proto__', 'hasOwnProperty', 'valueOf', 'sessions', 'constructor']) {
    await page.evaluate(`location.hash = ${JSON.stringify(name)}`);
    const expected = name === 'sessions' ? 'Sessions' : 'API keys';
    await page.waitForFunction(`document.title.startsWith(${JSON.stringify(expected)})`, undefined, { timeout: 20_000 });
    await page.getByRole('heading', { name: expected }).waitFor({ timeout: 20_000 });
    t.same(errors, [], `#${name}: ${expected}, no page error`);
  }
});
