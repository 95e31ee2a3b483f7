import t from 'tap';
import { openWatchedPage, signInWithPassword, skip, startConsoleGateway } from '../helpers/console-page.js';

/**
 * The security page offers only what the gateway can do (GET /auth/mfa's `offered`): in
 * production without AUTHGATE_MFA_ENCRYPTION_KEY and without AUTHGATE_WEBAUTHN_RP_ID/_ORIGINS the
 * console says so instead of showing forms whose every use would end in the gateway's 409 (1228,
 * 1231). Outside production both always have a default, so the configuration is made directly.
 * In a real headless Chromium; no console error, no request off the origin.
 */
t.test('neither TOTP nor passkeys offered: the page says so, and shows no form to add one', { skip }, async (t) => {
  const gw = await startConsoleGateway(t, {
    configure: (config) => ({ ...config, webauthn: undefined, mfa: { ...config.mfa, encryptionKey: undefined } }),
  });
  const org = await gw.createOrganization({ name: 'Quiet Harbour', email: `quiet-${process.pid}@example.test` });
  const { page, problems, urls, shot } = await openWatchedPage(t, []);
  await page.goto(`${gw.publicUrl}/console/#security`);
  await signInWithPassword(page, org.email, org.password);
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
  t.match(await page.locator('#totp-not-offered').textContent(), /does not offer authenticator apps/);
  t.match(await page.locator('#passkeys-not-offered').textContent(), /does not offer passkeys/);
  t.equal(await page.getByRole('button', { name: 'Set up an authenticator app' }).count(), 0, 'no TOTP setup form');
  t.equal(await page.getByRole('button', { name: 'Add a passkey' }).count(), 0, 'no passkey form');
  t.match(await page.locator('#mfa-summary').textContent(), /password only; this gateway offers no second factor/);
  await shot('mfa-not-offered');
  t.same(problems, [], 'no console error');
  t.same(urls.filter((url) => !url.startsWith(gw.publicUrl)), [], 'no request off the origin');
});
