import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CDPSession } from 'playwright-core';
import t from 'tap';
import { openWatchedPage, signInWithPassword, signOut, skip, startConsoleGateway, STRICT_CSP } from '../helpers/console-page.js';
import { clock, codeAt } from '../helpers/second-factor.js';

/**
 * Issue 32's passkeys in the console, in a real headless Chromium against a real gateway, with the
 * Chrome DevTools Protocol's virtual authenticator (CTAP2, internal, user verification on): the
 * security page registers a passkey (@simplewebauthn/browser's startRegistration with the
 * gateway's options; the first factor, so ten recovery codes shown once), renames it; sign-in's
 * second step signs with it (startAuthentication with the 1116 answer's passkeyOptions) and the
 * signature counter moves. With user verification failing, the browser refuses the ceremony; a
 * client that asks the authenticator not to verify (the options rewritten on the way in) gets an
 * assertion without the UV flag, which the gateway refuses. The same device cannot register twice
 * (excludeCredentials). An authenticator app besides brings no new recovery codes, and the second
 * step then offers the passkey, the app's code and a recovery code. Removal of both with the
 * password, after which the password alone signs in. Since issue 45, each change while a factor
 * is enrolled also proves it: the proof field left empty, the passkey signs the step-up.
 * The page runs on http://localhost:<port> (a secure context; 127.0.0.1 is no valid RP ID), the
 * gateway told that origin. No console error, no request off the origin, the CSP the strict one.
 */

/** A port free now, for a gateway that must be told its origin before it listens. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Credential = { credentialId: string; signCount: number };
const credentials = async (cdp: CDPSession, authenticatorId: string) => ((await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as { credentials: Credential[] }).credentials;

t.test('passkeys from the console: register, rename, sign in with one, user verification required, remove', { skip }, async (t) => {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const time = clock();
  const gw = await startConsoleGateway(t, { env: { AUTHGATE_WEBAUTHN_RP_ID: 'localhost', AUTHGATE_WEBAUTHN_ORIGINS: origin }, deps: { now: time.now }, port });
  const org = await gw.createOrganization({ name: 'Canal Boats', email: `canal-${process.pid}@example.test` });

  const { page, problems, urls, shot } = await openWatchedPage(t, [401, 403]);

  // The virtual authenticator: a platform one that verifies its user and answers at once.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  const answer = await page.goto(`${origin}/console/#security`);
  t.equal(answer?.headers()['content-security-policy'], STRICT_CSP, 'the strict CSP, unchanged');
  await signInWithPassword(page, org.email, org.password);
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
  await page.locator('#passkeys-none').waitFor();

  // A wrong password: under its field, nothing registered.
  const password = page.getByLabel('Current password (to add a passkey)');
  await password.fill('not the password');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.locator('#passkey-password-error').filter({ hasText: 'not right' }).waitFor();
  t.equal((await credentials(cdp, authenticatorId)).length, 0, 'no ceremony ran');

  // Registered: the first factor, so the recovery codes come once.
  await password.fill(org.password);
  await page.getByLabel('Passkey name (optional)').fill('Laptop');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('heading', { name: /Passkey “Laptop” added/ }).waitFor();
  t.equal((await page.locator('#recovery-codes li').allTextContents()).length, 10, 'ten recovery codes, shown once');
  await shot('mfa-7-passkey-added');
  await page.getByRole('button', { name: 'I have stored them' }).click();
  const table = page.locator('#passkeys');
  await table.getByRole('cell', { name: 'Laptop', exact: true }).waitFor();
  const [credential] = await credentials(cdp, authenticatorId);
  t.ok(credential, 'the authenticator holds the credential');
  t.match(await page.locator('#mfa-summary').textContent(), /a passkey/);

  // The same device again: excluded by the gateway's options, the browser says so.
  await password.fill(org.password);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByRole('alert').filter({ hasText: 'already holds a passkey' }).waitFor();
  t.equal((await credentials(cdp, authenticatorId)).length, 1, 'still one');

  // Renamed.
  await page.getByRole('button', { name: 'Rename Laptop' }).click();
  await page.getByLabel('New name for Laptop').fill('Work laptop');
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await table.getByRole('cell', { name: 'Work laptop', exact: true }).waitFor();

  // An authenticator app besides: no new recovery codes (they came with the first factor).
  await page.getByLabel('Current password (to set up the app)').fill(org.password);
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
  await page.getByLabel('Code from the app', { exact: true }).fill(codeAt(secret, time.now()));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('status').filter({ hasText: 'Your recovery codes stay as they are' }).waitFor();
  t.equal(await page.locator('#recovery-codes').count(), 0, 'no recovery codes shown again');
  // Issue 45: with a passkey enrolled, the setup asked for a proof; the field left empty, the passkey gave it.
  t.ok((await credentials(cdp, authenticatorId))[0]!.signCount > credential!.signCount, 'the passkey confirmed the app\'s setup (its counter moved)');
  await page.locator('#recovery-left').filter({ hasText: /^10 unused/ }).waitFor();
  await shot('mfa-8-passkeys');

  // Signed out; the second step offers the passkey, and it signs in.
  await signOut(page);
  await signInWithPassword(page, org.email, org.password);
  const usePasskey = page.getByRole('button', { name: 'Use a passkey' });
  await usePasskey.waitFor();
  t.equal(await page.getByLabel('Code from your authenticator app').isVisible(), true, 'the app\'s code offered too');
  t.equal(await page.getByRole('button', { name: 'Use a recovery code instead' }).isVisible(), true, 'and a recovery code');
  await shot('mfa-9-second-step-passkey');
  await usePasskey.click();
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
  t.ok((await credentials(cdp, authenticatorId))[0]!.signCount > credential!.signCount, 'the signature counter moved');
  await table.getByRole('row').filter({ hasText: 'Work laptop' }).filter({ hasNotText: 'Never' }).waitFor();
  t.pass('signed in with the passkey; its last use shown');

  // User verification failing: the authenticator refuses, the browser says so, no sign-in.
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
  await signOut(page);
  await signInWithPassword(page, org.email, org.password);
  const finished: number[] = [];
  page.on('response', (response) => {
    if (response.url().endsWith('/auth/login/mfa')) finished.push(response.status());
  });
  await usePasskey.click();
  await page.getByRole('alert').filter({ hasText: 'The passkey was not used' }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Sign out' }).isVisible(), false, 'not signed in');

  // A client that asks for no verification gets an assertion without the UV flag: the gateway refuses it.
  await page.getByRole('button', { name: 'Start over' }).click();
  await page.route('**/auth/login', async (route) => {
    const response = await route.fetch();
    const body = (await response.json()) as { passkeyOptions?: { userVerification?: string } };
    if (body.passkeyOptions !== undefined) body.passkeyOptions.userVerification = 'discouraged';
    await route.fulfill({ response, json: body });
  });
  await signInWithPassword(page, org.email, org.password);
  const refused = page.waitForResponse((response) => response.url().endsWith('/auth/login/mfa'));
  await usePasskey.click();
  t.equal((await refused).status(), 401, 'the gateway refused the unverified assertion');
  await page.getByRole('alert').filter({ hasText: 'did not accept this passkey' }).waitFor();
  t.same(finished, [401], 'the one the browser refused was never sent');
  t.match(gw.logs.text(), /passkey\.login_refused[^\n]*[Uu]ser verification/, 'refused for the missing user verification');
  t.equal(await page.getByRole('button', { name: 'Sign out' }).isVisible(), false, 'not signed in');
  await shot('mfa-10-passkey-unverified-refused');
  await page.unroute('**/auth/login');

  // Verified again: signed in; then removal with the password, after which the password alone signs in.
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
  await page.getByRole('button', { name: 'Start over' }).click();
  await signInWithPassword(page, org.email, org.password);
  await usePasskey.click();
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
  time.step();
  await page.getByLabel('Current password (to remove the app)').fill(org.password);
  await page.getByLabel('Code from the app (to remove it)').fill(codeAt(secret, time.now()));
  await page.getByRole('button', { name: 'Remove the authenticator app' }).click();
  await page.getByRole('status').filter({ hasText: 'The authenticator app is removed' }).waitFor();
  t.equal(await page.getByRole('heading', { name: 'Recovery codes' }).isVisible(), true, 'the recovery codes stay with the passkey');
  await page.getByRole('button', { name: 'Remove Work laptop' }).click();
  await page.getByLabel('Current password (to remove Work laptop)').fill(org.password);
  await page.getByRole('button', { name: 'Remove passkey' }).click();
  await page.locator('#passkeys-none').waitFor();
  t.equal(await page.getByRole('heading', { name: 'Recovery codes' }).count(), 0, 'the recovery codes went with the last factor');
  await signOut(page);
  await signInWithPassword(page, org.email, org.password);
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
  t.pass('the password alone signs in again');

  t.same(urls.filter((url) => new URL(url).origin !== origin), [], 'no request off the origin');
  t.same(problems, [], 'no console errors');
});
