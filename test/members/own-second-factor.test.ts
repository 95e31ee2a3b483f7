import t from 'tap';
import { call, clock, codeAt, problem } from '../helpers/second-factor.js';
import { FLAG_UP, FLAG_UV, SoftAuthenticator } from '../helpers/webauthn.js';
import { invite, loginStep, stopSharedRedis, twoReplicas } from './started-team.js';

/**
 * Each member's own second factor (issue 50) over real HTTP, on the memory store and on two
 * replicas of one real Redis: a member enrols TOTP (and registers a passkey) on its own login
 * token; its login then needs its own code while the owner's (the organization's first member)
 * does not; another member's token or code never touches or finishes it; the failure bound counts
 * per member, so one member's wrong codes lock only that member.
 */
t.teardown(stopSharedRedis);

const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:8443';
const WEBAUTHN = { AUTHGATE_WEBAUTHN_RP_ID: RP_ID, AUTHGATE_WEBAUTHN_ORIGINS: ORIGIN };

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: a member's TOTP is its own: its login needs its code, the owner's does not`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time.now);
    const org = await a.createOrganization();
    const owner = await a.login(org.email, org.password);
    const dev = await invite(t, a, owner, 'developer', b);
    const viewer = await invite(t, a, owner, 'viewer');

    const begun = await call(a, 'POST', '/auth/mfa/totp', { currentPassword: dev.password }, dev.token);
    t.equal(begun.status, 200, `the member enrols on its own token (${begun.body.slice(0, 160)})`);
    const { secret, otpauthUri } = begun.json() as { secret: string; otpauthUri: string };
    t.match(otpauthUri, encodeURIComponent(dev.email), "the authenticator app's label is the member's e-mail");
    problem(t, await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, viewer.token), 403, 1217, "another member's token with the organization's password");
    const confirmed = await call(b, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, dev.token);
    t.equal(confirmed.status, 200, 'confirmed on the other replica');
    const recoveryCodes = (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes;
    t.equal(recoveryCodes.length, 10, 'its own recovery codes');

    const status = (token: string) => call(a, 'GET', '/auth/mfa', undefined, token).then((r) => r.json() as { totp: { enabled: boolean }; recoveryCodesLeft: number });
    t.equal((await status(dev.token)).totp.enabled, true, "the member's status");
    t.equal((await status(owner)).totp.enabled, false, "the owner's (the organization's) untouched");
    t.equal((await status(viewer.token)).totp.enabled, false, "another member's untouched");

    t.equal((await loginStep(a, org)).status, 200, 'the owner logs in with the password alone');
    t.equal((await loginStep(a, viewer)).status, 200, 'another member too');
    const step = await loginStep(a, dev);
    t.equal(step.code, 1116, 'the member needs its second factor');
    t.strictSame(step.body.methods, ['totp', 'recovery_code']);
    time.step();
    const finished = await call(b, 'POST', '/auth/login/mfa', { mfaToken: step.mfaToken, code: codeAt(secret, time.now()) });
    t.equal(finished.status, 200, `its own code finishes its login (${finished.body.slice(0, 160)})`);
    const devAgain = (finished.json() as { token: string }).token;
    t.equal((await status(devAgain)).totp.enabled, true, 'the token is the member\'s');
    problem(t, await call(a, 'PATCH', '/auth/organization', { name: 'Not a developer\'s to change' }, devAgain), 403, 1124, 'and acts with its role');

    // Another member's token cannot touch it: the owner's and the viewer's act on their own (none).
    time.step();
    problem(t, await call(a, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: codeAt(secret, time.now()) }, owner), 409, 1227, "the owner's token removes no member's TOTP");
    problem(t, await call(a, 'POST', '/auth/mfa/recovery-codes', { currentPassword: viewer.password, recoveryCode: recoveryCodes[0] }, viewer.token), 409, 1227, "a viewer's token regenerates no member's codes");
    t.equal((await status(dev.token)).recoveryCodesLeft, 10, "the member's codes all there");

    // The owner enrols its own: neither's code finishes the other's login.
    const ownerBegun = (await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, owner)).json() as { secret: string };
    t.equal((await call(a, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(ownerBegun.secret, time.now()) }, owner)).status, 200, 'the owner enrols too');
    time.step();
    const devStep = await loginStep(a, dev);
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: devStep.mfaToken, code: codeAt(ownerBegun.secret, time.now()) }), 401, 1117, "the owner's code on the member's login");
    const ownerStep = await loginStep(b, org);
    t.equal(ownerStep.code, 1116, 'the owner now needs its own');
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: ownerStep.mfaToken, recoveryCode: recoveryCodes[0] }), 401, 1117, "the member's recovery code on the owner's login");
    t.equal((await call(b, 'POST', '/auth/login/mfa', { mfaToken: devStep.mfaToken, recoveryCode: recoveryCodes[0] })).status, 200, "the member's recovery code on its own login");

    // Removal with its own password and code.
    time.step();
    t.equal((await call(b, 'DELETE', '/auth/mfa/totp', { currentPassword: dev.password, code: codeAt(secret, time.now()) }, dev.token)).status, 204, 'the member removes its own');
    t.equal((await loginStep(a, dev)).status, 200, 'its password alone logs it in again');
    t.equal((await loginStep(a, org)).code, 1116, "the owner's stays");
  });

  t.test(`${store}: the failure bound counts per member`, async (t) => {
    const time = clock();
    const limit = 3;
    const [a, b] = await twoReplicas(t, store, time.now, { AUTHGATE_MFA_FAILURE_LIMIT: String(limit) });
    const org = await a.createOrganization();
    const owner = await a.login(org.email, org.password);
    const dev = await invite(t, a, owner, 'developer');
    const enrol = async (token: string, password: string) => {
      const { secret } = (await call(a, 'POST', '/auth/mfa/totp', { currentPassword: password }, token)).json() as { secret: string };
      t.equal((await call(a, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token)).status, 200, 'enrolled');
      return secret;
    };
    const devSecret = await enrol(dev.token, dev.password);
    const ownerSecret = await enrol(owner, org.password);
    time.step();
    const wrong = (code: string) => (code === '000000' ? '111111' : '000000');
    const devStep = await loginStep(a, dev);
    for (let i = 0; i < limit; i++) {
      const gw = i % 2 === 0 ? a : b;
      problem(t, await call(gw, 'POST', '/auth/login/mfa', { mfaToken: devStep.mfaToken, code: wrong(codeAt(devSecret, time.now())) }), 401, 1117, `the member's wrong code ${i + 1}`);
    }
    const locked = await loginStep(b, dev);
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: locked.mfaToken, code: codeAt(devSecret, time.now()) }), 429, 1121, "then the member's right code is refused too");
    const ownerStep = await loginStep(b, org);
    const ownerIn = await call(a, 'POST', '/auth/login/mfa', { mfaToken: ownerStep.mfaToken, code: codeAt(ownerSecret, time.now()) });
    t.equal(ownerIn.status, 200, `the owner's second factor has its own bound (${ownerIn.body.slice(0, 160)})`);
  });

  t.test(`${store}: a member's passkey is its own: registered under its handle, its login's alone`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time.now, WEBAUTHN);
    const org = await a.createOrganization();
    const owner = await a.login(org.email, org.password);
    const dev = await invite(t, a, owner, 'developer');
    const begun = await call(a, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: dev.password }, dev.token);
    t.equal(begun.status, 200, `the member begins a registration (${begun.body.slice(0, 160)})`);
    const options = (begun.json() as { options: { challenge: string; rp: { id?: string }; user: { id: string; name: string } } }).options;
    t.equal(Buffer.from(options.user.id, 'base64url').toString('utf8'), dev.id, 'under its own user handle');
    t.equal(options.user.name, dev.email);
    const authenticator = new SoftAuthenticator();
    const added = await call(b, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(options, { origin: ORIGIN }) }, dev.token);
    t.equal(added.status, 201, 'registered on the other replica');
    t.equal(((added.json() as { recoveryCodes?: string[] }).recoveryCodes ?? []).length, 10, 'its first factor brings its codes');
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(options, { origin: ORIGIN }) }, owner), 400, 1229, "the owner's token finishes no member's registration");

    const ownerStatus = (await call(a, 'GET', '/auth/mfa', undefined, owner)).json() as { passkeys: unknown[] };
    t.strictSame(ownerStatus.passkeys, [], "not the owner's");
    const passkeyId = ((await call(a, 'GET', '/auth/mfa', undefined, dev.token)).json() as { passkeys: Array<{ id: string }> }).passkeys[0]!.id;
    problem(t, await call(a, 'PATCH', `/auth/mfa/passkeys/${passkeyId}`, { name: 'taken over' }, owner), 404, 1230, "the owner's token renames no member's passkey");
    t.equal((await loginStep(a, org)).status, 200, 'the owner logs in with its password alone');

    const step = await loginStep(a, dev);
    t.equal(step.code, 1116, 'the member needs its passkey');
    const passkeyOptions = step.body.passkeyOptions as { challenge: string; rpId?: string; allowCredentials: Array<{ id: string }> };
    t.strictSame(passkeyOptions.allowCredentials.map((c) => c.id), [authenticator.id], 'its own passkey offered');
    const orgHandle = Buffer.from(org.id).toString('base64url');
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: step.mfaToken, passkey: authenticator.assert(passkeyOptions, { origin: ORIGIN, userHandle: orgHandle }) }), 401, 1117, "an assertion naming the organization's handle");
    const memberHandle = Buffer.from(dev.id).toString('base64url');
    const done = await call(b, 'POST', '/auth/login/mfa', { mfaToken: step.mfaToken, passkey: authenticator.assert(passkeyOptions, { origin: ORIGIN, userHandle: memberHandle, flags: FLAG_UP | FLAG_UV }) });
    t.equal(done.status, 200, `its passkey finishes its login (${done.body.slice(0, 160)})`);
  });
}
