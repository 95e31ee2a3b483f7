import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { ADMIN_TOKEN, send, UA, type StartedGateway } from '../helpers/gateway.js';
import { findChromium, launchBrowser } from '../helpers/browser.js';
import { startConsoleGateway } from '../helpers/console-page.js';

/**
 * Issue 31 in the console, in a real headless Chromium against a real gateway: the security page
 * changes the password (the policy's reason under the field, a wrong current password under its
 * own without signing out, then the message that other sessions ended, the old tokens refused and
 * the console still working with the returned one) and the name and e-mail (PATCH
 * /auth/organization: the refusals under their fields, the other sessions ended by an e-mail
 * change and not by a name change), and the reset page sets a password with a
 * token the admin API made (from the URL's fragment, which no request carries; once, not twice).
 * Screenshots go to test-output/console/ beside the other console tests'.
 */

const chromium = findChromium();
const SHOTS = new URL('../../test-output/console/', import.meta.url);
const skip = chromium === undefined ? 'no Chromium found (Debian: apt-get install chromium): browser tests skipped' : false;

// One browser for the file (a launch is the slowest step); each test gets its own context.
let browser: Promise<Browser> | undefined;
t.teardown(async () => {
  if (browser !== undefined) await (await browser).close();
});

/** A page that records what would be a fault: a page error, or a console error other than an API refusal. */
async function openPage(t: Test): Promise<{ page: Page; problems: string[]; urls: string[]; shot(name: string): Promise<unknown> }> {
  mkdirSync(SHOTS, { recursive: true });
  browser ??= launchBrowser(chromium!);
  // Clipboard permissions: a test pastes into the password field as a person would.
  const page = await (await browser).newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
  t.teardown(() => page.context().close());
  const problems: string[] = [];
  // A refused call shows in Chromium's console as a failed resource load: that is the API answering.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of (400|401|403|409|429)/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  return { page, problems, urls, shot: (name) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true }) };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function login(gw: StartedGateway, email: string, password: string): Promise<number> {
  const res = await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  return res.status;
}

t.test('the security page changes the password', { skip }, async (t) => {
  const gw = await startConsoleGateway(t);
  const org = await gw.createOrganization({ name: 'Lighthouse Keepers', email: `keeper-${process.pid}@example.test` });
  const other = await gw.login(org.email, org.password);
  const { page, problems, shot } = await openPage(t);

  // Signed in through the page; the token the console holds, read off its sign-in answer.
  await page.goto(`${gw.publicUrl}/console/#security`);
  const signedIn = page.waitForResponse((response) => response.url().endsWith('/auth/login') && response.status() === 200);
  await page.getByLabel('E-mail').fill(org.email);
  await page.getByLabel('Password').fill(org.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const consoleToken = ((await (await signedIn).json()) as { token: string }).token;
  await page.getByRole('heading', { name: 'Security' }).waitFor();
  t.match(await page.title(), /^Security/);

  const current = page.getByLabel('Current password', { exact: true });
  const next = page.getByLabel('New password', { exact: true });
  t.equal(await next.getAttribute('autocomplete'), 'new-password');
  t.equal(await current.getAttribute('autocomplete'), 'current-password');
  // The account a password manager saves the new password under: the organization's e-mail.
  const username = page.locator('input[autocomplete="username"]');
  await page.waitForFunction(`document.querySelector('input[autocomplete="username"]').value !== ''`);
  t.equal(await username.inputValue(), org.email, 'a hidden username field holds the e-mail');
  // Paste allowed: a real paste from the clipboard (as from a password manager) lands in the field.
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify('pasted from a password manager')})`);
  await next.focus();
  await page.keyboard.press('ControlOrMeta+V');
  t.equal(await next.inputValue(), 'pasted from a password manager', 'a paste is taken');

  // The policy's reason, under the new password (the name inside it: 1216).
  await current.fill(org.password);
  await next.fill('lighthouse keepers forever and ever');
  await page.getByRole('button', { name: 'Change password' }).click();
  const nextError = page.locator('#new-password-error');
  await nextError.waitFor();
  t.match(await nextError.textContent(), /contains the organization's name/);
  t.equal(await next.getAttribute('aria-invalid'), 'true');
  t.match(await next.getAttribute('aria-describedby'), /new-password-error/, 'the reason is announced with the field');
  await shot('8-security-policy-refusal');

  // Too short: the same place, the other reason; the first reason is gone.
  await next.fill('short one');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.locator('#new-password-error').filter({ hasText: 'at least' }).waitFor();
  t.notMatch(await nextError.textContent(), /name/);

  // A wrong current password: 403 under that field, and still signed in (not a sign-out).
  await current.fill('not the current password');
  await next.fill('a brand new passphrase for the lamp');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.locator('#current-password-error').filter({ hasText: 'not right' }).waitFor();
  t.equal(await page.locator('#new-password-error').isVisible(), false, "the new password's message is cleared");
  t.equal(await page.getByRole('heading', { name: 'Security' }).isVisible(), true, 'still on the page, signed in');
  t.equal((await gw.get('/auth/sessions', bearer(consoleToken))).status, 200, "the console's session is still good");

  // Changed: the message, both old sessions refused, the console on with the new token.
  const changed = page.waitForResponse((response) => response.url().endsWith('/auth/password') && response.status() === 200);
  await current.fill(org.password);
  await next.fill('a brand new passphrase for the lamp');
  await page.getByRole('button', { name: 'Change password' }).click();
  const newToken = ((await (await changed).json()) as { token: string }).token;
  await page.getByRole('status').filter({ hasText: 'Every other session of your organization has ended' }).waitFor();
  t.equal(await current.inputValue(), '', 'the fields are emptied');
  t.equal(await next.inputValue(), '');
  t.equal(await username.inputValue(), org.email, 'the username field is kept');
  await shot('9-security-password-changed');
  t.equal((await gw.get('/auth/sessions', bearer(other))).status, 401, "another session's token is refused");
  t.equal((await gw.get('/auth/sessions', bearer(consoleToken))).status, 401, "the console's old token is refused");
  t.equal((await gw.get('/auth/sessions', bearer(newToken))).status, 200, 'the returned token works');
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByText('(this session)').waitFor();
  t.equal(await page.getByRole('row').filter({ hasText: '(this session)' }).count(), 1, 'the console works on, in its one new session');
  t.equal(await login(gw, org.email, org.password), 401, 'the old password fails');
  t.equal(await login(gw, org.email, 'a brand new passphrase for the lamp'), 200, 'the new one works');
  t.same(problems, [], 'no console errors');
});

t.test('the security page changes the name and the e-mail', { skip }, async (t) => {
  const gw = await startConsoleGateway(t);
  const org = await gw.createOrganization({ name: 'Ferry Operators', email: `ferry-${process.pid}@example.test` });
  const taken = await gw.createOrganization({ name: 'Someone Else', email: `taken-${process.pid}@example.test` });
  const other = await gw.login(org.email, org.password);
  const { page, problems, shot } = await openPage(t);

  await page.goto(`${gw.publicUrl}/console/#security`);
  const signedIn = page.waitForResponse((response) => response.url().endsWith('/auth/login') && response.status() === 200);
  await page.getByLabel('E-mail').fill(org.email);
  await page.getByLabel('Password').fill(org.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const consoleToken = ((await (await signedIn).json()) as { token: string }).token;
  await page.getByRole('heading', { name: 'Name and e-mail' }).waitFor();
  const shown = page.locator('section[aria-labelledby="profile-title"] dl');
  await shown.filter({ hasText: 'Ferry Operators' }).waitFor();
  t.match(await shown.textContent(), new RegExp(`Ferry Operators.*${org.email.replace(/[.]/g, '\\.')}`), 'the current values shown');
  const name = page.getByLabel('Name', { exact: true });
  const email = page.getByLabel('E-mail', { exact: true });
  const password = page.getByLabel('Current password (needed to change the e-mail)');
  t.equal(await name.inputValue(), 'Ferry Operators', 'the fields start from them');
  const save = page.getByRole('button', { name: 'Save' });

  // A name change: no password asked, no session ended.
  await name.fill('Ferry Operators of the North');
  await save.click();
  await shown.filter({ hasText: 'Ferry Operators of the North' }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  t.equal((await gw.get('/auth/organization', bearer(other))).json().name, 'Ferry Operators of the North', 'the gateway holds the new name');
  t.equal((await gw.get('/auth/sessions', bearer(other))).status, 200, 'a name change ends no session');

  // An e-mail change without the current password: asked for under its field, nothing sent.
  await email.fill(`new-ferry-${process.pid}@example.test`);
  await save.click();
  await page.locator('#org-current-password-error').filter({ hasText: 'needs the current password' }).waitFor();
  // A wrong one: the API's 403 under the same field, still signed in.
  await password.fill('not the current password');
  await save.click();
  await page.locator('#org-current-password-error').filter({ hasText: 'not right' }).waitFor();
  t.equal(await page.getByRole('heading', { name: 'Security' }).isVisible(), true, 'still signed in');
  // An address in use: 409 under the e-mail field.
  await email.fill(taken.email);
  await password.fill(org.password);
  await save.click();
  await page.locator('#org-email-error').waitFor();
  t.match(await page.locator('#org-email-error').textContent(), /already|taken|in use/i);
  t.equal(await email.getAttribute('aria-invalid'), 'true');
  await shot('13-security-email-taken');

  // The change: the message, the other session ended, this one kept, the new address signs in.
  const newEmail = `new-ferry-${process.pid}@example.test`;
  await email.fill(newEmail);
  await password.fill(org.password);
  await save.click();
  await page.getByRole('status').filter({ hasText: 'Sign in with the new e-mail' }).waitFor();
  await shown.filter({ hasText: newEmail }).waitFor();
  t.equal(await password.inputValue(), '', 'the password is not kept in the page');
  await shot('14-security-email-changed');
  t.equal((await gw.get('/auth/sessions', bearer(other))).status, 401, 'the other session ended');
  t.equal((await gw.get('/auth/sessions', bearer(consoleToken))).status, 200, "the console's session goes on");
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByText('(this session)').waitFor();
  t.equal(await login(gw, newEmail, org.password), 200, 'the new e-mail signs in');
  t.equal(await login(gw, org.email, org.password), 401, 'the old one does not');
  t.same(problems, [], 'no console errors');
});

t.test('the reset page sets a password with a token from the admin API, once', { skip }, async (t) => {
  const gw = await startConsoleGateway(t);
  const org = await gw.createOrganization({ name: 'Harbour Pilots', email: `pilot-${process.pid}@example.test` });
  const issued = await send(`${gw.opsUrl}/admin/organizations/${org.id}/password-reset`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(issued.status, 200);
  const resetToken = (issued.json() as { resetToken: string }).resetToken;
  const { page, problems, urls, shot } = await openPage(t);

  const answer = await page.goto(`${gw.publicUrl}/console/reset#${resetToken}`);
  t.equal(answer?.status(), 200, '/console/reset is a page of its own');
  t.match(answer!.headers()['content-security-policy'], /default-src 'none'; script-src 'self'/, 'under the same strict CSP');
  await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
  await page.getByText('Using the reset token from your link.').waitFor();
  t.equal(await page.getByLabel('Reset token').isVisible(), false, 'the token from the link is not shown');
  t.notOk(page.url().includes(resetToken), 'the token is out of the address bar');
  t.equal(await page.evaluate('location.hash'), '');
  const next = page.getByLabel('New password', { exact: true });
  t.equal(await next.getAttribute('autocomplete'), 'new-password');

  // The policy refuses (the e-mail's local part inside), under the field; the token stays usable.
  await next.fill(`${org.email.split('@')[0]} is the password`);
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.locator('#new-password-error').filter({ hasText: 'local part' }).waitFor();
  await shot('10-reset-policy-refusal');

  await page.getByLabel('Show password').check();
  t.equal(await next.getAttribute('type'), 'text', 'the password can be shown before it is sent');
  await next.fill('steady as she goes into the harbour');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.getByRole('heading', { name: 'Password set' }).waitFor();
  await page.getByText('Every session of your organization has ended').waitFor();
  await shot('11-reset-done');
  t.equal(await login(gw, org.email, 'steady as she goes into the harbour'), 200, 'the new password works');
  t.equal(await login(gw, org.email, org.password), 401, 'the old one does not');

  // The same link again: the used token is refused, under its field, now shown for another one.
  await page.goto(`${gw.publicUrl}/console/reset#token=${resetToken}`);
  await next.fill('another passphrase for the pilots');
  await page.getByRole('button', { name: 'Set new password' }).click();
  const tokenError = page.locator('#reset-token-error');
  await tokenError.waitFor();
  t.match(await tokenError.textContent(), /Invalid or expired reset token|invalid|expired/i);
  t.equal(await page.getByLabel('Reset token').isVisible(), true, 'the token field is shown to enter another');
  await shot('12-reset-token-used');
  t.equal(await login(gw, org.email, 'another passphrase for the pilots'), 401, 'the used token set nothing');

  // No request carried the token in its URL (only in the one POST body), and no log line holds it.
  t.same(urls.filter((url) => url.includes(resetToken)), [], 'never in a request URL');
  t.notOk(gw.logs.text().includes(resetToken), 'never in a log line');
  t.same(problems, [], 'no console errors');
});

t.test('the reset page without a link asks for the token; the sign-in page leads to it', { skip }, async (t) => {
  const gw = await startConsoleGateway(t);
  const { page, problems } = await openPage(t);
  await page.goto(`${gw.publicUrl}/console/`);
  await page.getByRole('link', { name: 'set a new password with it' }).click();
  await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
  t.equal(new URL(page.url()).pathname, '/console/reset');
  const token = page.getByLabel('Reset token');
  t.equal(await token.isVisible(), true, 'asked for');
  await page.getByLabel('New password', { exact: true }).fill('a long enough passphrase here');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.locator('#reset-token-error').filter({ hasText: 'Enter the reset token' }).waitFor();
  // A made-up token: the one generic answer, under the field.
  await token.fill(`agr_abc_${'A'.repeat(22)}`);
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.locator('#reset-token-error').filter({ hasText: /expired/i }).waitFor();
  t.same(problems, [], 'no console errors');
});
