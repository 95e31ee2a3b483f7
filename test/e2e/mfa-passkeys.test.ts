import t, { type Test } from 'tap';
import { ADMIN_TOKEN, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { call, problem } from '../helpers/second-factor.js';
import { startRedis } from '../helpers/redis.js';
import { FLAG_UP, FLAG_UV, SoftAuthenticator } from '../helpers/webauthn.js';

/**
 * Passkeys as a second factor (issue 32) over real HTTP, on the memory store and on two replicas
 * of one real Redis, with a software authenticator (test/helpers/webauthn.ts: ES256, attestation
 * none, the flags and counter the test picks). Registration needs the password and answers a
 * stored challenge once; a response from another origin, without user verification, to another
 * challenge, replayed or late is refused and stores nothing. A login of an organization with a
 * passkey answers 403 (1116) with passkeyOptions; the assertion finishes it once: a counter not
 * above the stored one is refused, and one assertion raced across two replicas gives one 200.
 * Another organization's passkey never finishes a login. Recovery codes come with the first
 * factor and go with the last.
 */

const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:8443';
type Clock = { now: () => number; advance: (ms: number) => void };
function clock(): Clock {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms; } };
}

/** One redis-server for the file: each test's organizations are its own. */
let redis: Promise<{ url: string; stop: () => Promise<void> }> | undefined;
t.teardown(async () => (await redis)?.stop());

async function twoReplicas(t: Test, store: 'memory' | 'redis', time: Clock): Promise<[StartedGateway, StartedGateway]> {
  const deps = { now: time.now };
  // Trusting X-Forwarded-For: a test may speak from addresses of its own (call's last argument).
  const webauthn = { AUTHGATE_WEBAUTHN_RP_ID: RP_ID, AUTHGATE_WEBAUTHN_ORIGINS: `${ORIGIN},http://console.localhost:8443`, AUTHGATE_TRUST_PROXY: 'true' };
  if (store === 'memory') {
    const gw = await startGateway(t, { env: webauthn, deps });
    return [gw, gw];
  }
  redis ??= startRedis();
  const env = { ...webauthn, AUTHGATE_REDIS_URL: (await redis).url, AUTHGATE_REDIS_TIMEOUT_MS: '1000', AUTHGATE_MFA_ENCRYPTION_KEY: 'one key both replicas share, 32 bytes or more' };
  return [await startGateway(t, { env, deps }), await startGateway(t, { env, deps })];
}

type Options = { challenge: string; rp: { id?: string }; authenticatorSelection?: { userVerification?: string; residentKey?: string }; excludeCredentials?: Array<{ id: string }> };

async function begin(t: Test, gw: StartedGateway, token: string, password: string, proof: Record<string, unknown> = {}): Promise<Options> {
  const res = await call(gw, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: password, ...proof }, token);
  t.equal(res.status, 200, `registration begun (${res.body.slice(0, 200)})`);
  t.equal(res.headers['cache-control'], 'no-store');
  return (res.json() as { options: Options }).options;
}

/** An organization, its login token, and a registered passkey (with the recovery codes it brought). */
async function withPasskey(t: Test, a: StartedGateway, b: StartedGateway) {
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const authenticator = new SoftAuthenticator();
  const options = await begin(t, a, token, org.password);
  // Finished on the other replica: the challenge is in the store, not in the process.
  const res = await call(b, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(options, { origin: ORIGIN }) }, token);
  t.equal(res.status, 201, `registered (${res.body.slice(0, 200)})`);
  const body = res.json() as { passkey: { id: string; name: string }; recoveryCodes?: string[] };
  return { org, token, authenticator, passkey: body.passkey, recoveryCodes: body.recoveryCodes ?? [] };
}

/**
 * Issue 45: a change to the authenticators of an organization with a factor proves it; here with
 * a passkey's assertion over the session's step-up options (POST /auth/mfa/step-up).
 */
async function stepUp(t: Test, gw: StartedGateway, token: string, authenticator: SoftAuthenticator): Promise<{ passkey: unknown }> {
  const res = await call(gw, 'POST', '/auth/mfa/step-up', undefined, token);
  t.equal(res.status, 200, `step-up options (${res.body.slice(0, 200)})`);
  return { passkey: authenticator.assert((res.json() as { passkeyOptions: { challenge: string; rpId?: string } }).passkeyOptions, { origin: ORIGIN }) };
}

type LoginChallenge = { mfaToken: string; methods: string[]; passkeyOptions: { challenge: string; rpId?: string; userVerification?: string; allowCredentials?: Array<{ id: string }> } };
async function loginChallenge(t: Test, gw: StartedGateway, org: { email: string; password: string }, address?: string): Promise<LoginChallenge> {
  const res = await call(gw, 'POST', '/auth/login', { email: org.email, password: org.password }, undefined, address);
  problem(t, res, 403, 1116, 'the password alone');
  return res.json() as LoginChallenge;
}

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: register (password, stored challenge), list, rename, remove; refusals store nothing`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const org = await a.createOrganization();
    const token = await a.login(org.email, org.password);
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: 'not the password' }, token), 403, 1217, 'a wrong password');
    const key = await a.createApiKey(token);
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: org.password }, key.apiKey), 403, 1103, 'an API key cannot');
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys', { response: new SoftAuthenticator().register({ challenge: 'AAAA', rp: {} }, { origin: ORIGIN }) }, token), 400, 1229, 'nothing pending');

    const authenticator = new SoftAuthenticator();
    const refusals: Array<[string, (o: Options) => unknown]> = [
      ['another origin', (o) => authenticator.register(o, { origin: 'http://evil.test:8443' })],
      ['another RP ID', (o) => authenticator.register(o, { origin: ORIGIN, rpId: 'evil.test' })],
      ['user not verified', (o) => authenticator.register(o, { origin: ORIGIN, flags: FLAG_UP })],
      ['another challenge', (o) => authenticator.register({ ...o, challenge: Buffer.from('another challenge').toString('base64url') }, { origin: ORIGIN })],
      ['an assertion type', (o) => authenticator.register(o, { origin: ORIGIN, type: 'webauthn.get' })],
    ];
    for (const [what, answer] of refusals) {
      const options = await begin(t, a, token, org.password);
      problem(t, await call(b, 'POST', '/auth/mfa/passkeys', { response: answer(options) }, token), 403, 1120, what);
      problem(t, await call(b, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(options, { origin: ORIGIN }) }, token), 400, 1229, `${what}: the pending registration is used up`);
    }
    const late = await begin(t, a, token, org.password);
    time.advance(5 * 60_000 + 1000);
    problem(t, await call(b, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(late, { origin: ORIGIN }) }, token), 400, 1229, 'after 5 minutes');
    const replaced = await begin(t, a, token, org.password);
    await begin(t, b, token, org.password);
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(replaced, { origin: ORIGIN }) }, token), 403, 1120, 'a replaced registration\'s challenge');
    t.strictSame((await call(a, 'GET', '/auth/mfa', undefined, token)).json(), { methods: [], totp: { enabled: false, pending: false }, recoveryCodesLeft: 0, passkeys: [], offered: { totp: true, passkey: true } }, 'nothing stored by any refusal');
    t.equal((await call(a, 'POST', '/auth/login', { email: org.email, password: org.password })).status, 200, 'the password alone still logs in');

    const options = await begin(t, a, token, org.password);
    t.equal(options.rp.id, RP_ID);
    t.equal(options.authenticatorSelection?.userVerification, 'required');
    t.equal(options.authenticatorSelection?.residentKey, 'preferred');
    t.strictSame(options.excludeCredentials, []);
    const response = authenticator.register(options, { origin: ORIGIN });
    const added = await call(b, 'POST', '/auth/mfa/passkeys', { response }, token);
    t.equal(added.status, 201);
    t.equal(added.headers['cache-control'], 'no-store');
    const first = added.json() as { passkey: { id: string; name: string; createdAt: string; lastUsedAt: null }; recoveryCodes: string[] };
    t.equal(first.passkey.id, authenticator.id);
    t.equal(first.passkey.name, 'Passkey 1');
    t.equal(first.passkey.lastUsedAt, null);
    t.equal(new Set(first.recoveryCodes).size, 10, 'the first factor brings ten recovery codes');
    problem(t, await call(b, 'POST', '/auth/mfa/passkeys', { response }, token), 400, 1229, 'the same response replayed');

    problem(t, await call(b, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: org.password }, token), 403, 1123, 'with a passkey, the password alone no longer adds one');
    const again = await begin(t, b, token, org.password, await stepUp(t, a, token, authenticator));
    t.strictSame(again.excludeCredentials?.map((c) => c.id), [authenticator.id], 'its passkeys are excluded');
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys', { response: authenticator.register(again, { origin: ORIGIN }) }, token), 409, 1232, 'the same passkey twice');
    const other = new SoftAuthenticator();
    const second = await call(a, 'POST', '/auth/mfa/passkeys', { response: other.register(await begin(t, b, token, org.password, await stepUp(t, a, token, authenticator)), { origin: 'http://console.localhost:8443' }), name: 'Laptop' }, token);
    t.equal(second.status, 201, 'a second one, from the other listed origin');
    t.strictSame(Object.keys(second.json()), ['passkey'], 'no recovery codes with a second factor');
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys', { response: other.register(await begin(t, b, token, org.password, await stepUp(t, a, token, authenticator)), { origin: ORIGIN }), name: '' }, token), 400, 1200, 'an empty name');
    problem(t, await call(a, 'POST', '/auth/mfa/passkeys', { response: other.register(await begin(t, b, token, org.password, await stepUp(t, a, token, authenticator)), { origin: ORIGIN }), name: 'Lap\u202Epot' }, token), 400, 1200, 'a name that reorders what is shown');

    const status = await call(b, 'GET', '/auth/mfa', undefined, token);
    t.equal(status.headers['cache-control'], 'no-store');
    const listed = status.json() as { methods: string[]; recoveryCodesLeft: number; passkeys: Array<{ id: string; name: string }> };
    t.strictSame(listed.methods, ['recovery_code', 'passkey']);
    t.equal(listed.recoveryCodesLeft, 10);
    t.strictSame(listed.passkeys.map((p) => [p.id, p.name]), [[authenticator.id, 'Passkey 1'], [other.id, 'Laptop']]);
    t.notOk(status.body.includes('publicKey'), 'never the key');

    const renamed = await call(a, 'PATCH', `/auth/mfa/passkeys/${authenticator.id}`, { name: 'Phone' }, token);
    t.equal(renamed.status, 200);
    t.equal(renamed.headers['cache-control'], 'no-store');
    t.equal(renamed.json().name, 'Phone');
    t.equal(renamed.json().id, authenticator.id);
    problem(t, await call(a, 'PATCH', `/auth/mfa/passkeys/${new SoftAuthenticator().id}`, { name: 'x' }, token), 404, 1230, 'rename an unknown one');
    problem(t, await call(a, 'PATCH', `/auth/mfa/passkeys/${authenticator.id}`, { name: 'Pho\u200Bne' }, token), 400, 1200, 'an invisible character in a name');
    problem(t, await call(a, 'DELETE', `/auth/mfa/passkeys/${other.id}`, { currentPassword: 'wrong' }, token), 403, 1217, 'removal needs the password');
    problem(t, await call(b, 'DELETE', `/auth/mfa/passkeys/${other.id}`, { currentPassword: org.password }, token), 403, 1123, 'removal needs the second factor too');
    t.equal((await call(b, 'DELETE', `/auth/mfa/passkeys/${other.id}`, { currentPassword: org.password, ...(await stepUp(t, a, token, other)) }, token)).status, 204, 'removed');
    problem(t, await call(b, 'DELETE', `/auth/mfa/passkeys/${other.id}`, { currentPassword: org.password, ...(await stepUp(t, a, token, authenticator)) }, token), 404, 1230, 'removed already');
    t.strictSame((await call(a, 'GET', '/auth/mfa', undefined, token)).json().passkeys.map((p: { name: string }) => p.name), ['Phone']);

    await a.gateway.audit.flush();
    const types = ((await call(a, 'GET', '/auth/audit?limit=500', undefined, token)).json() as { events: Array<{ type: string }> }).events.map((e) => e.type);
    for (const type of ['mfa.passkey_added', 'mfa.passkey_removed']) t.ok(types.includes(type), `audited: ${type}`);
    const everything = [a.logs.text(), b.logs.text()].join('\n');
    t.notOk(first.recoveryCodes.some((code) => everything.includes(code)), 'no recovery code in a log line');
  });

  t.test(`${store}: login with a passkey; counter, user verification, origin and challenge checked; one assertion across two replicas gives one 200`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const { org, authenticator } = await withPasskey(t, a, b);
    const plain = await a.createOrganization();
    t.type(await b.login(plain.email, plain.password), 'string', 'an organization without a factor logs in as before');

    const challenge = await loginChallenge(t, b, org);
    t.strictSame(challenge.methods, ['recovery_code', 'passkey']);
    t.equal(challenge.passkeyOptions.userVerification, 'required');
    t.equal(challenge.passkeyOptions.rpId, RP_ID);
    t.strictSame(challenge.passkeyOptions.allowCredentials?.map((c) => c.id), [authenticator.id]);
    const done = await call(a, 'POST', '/auth/login/mfa', { mfaToken: challenge.mfaToken, passkey: authenticator.assert(challenge.passkeyOptions, { origin: ORIGIN }) });
    t.equal(done.status, 200, `finished on the other replica (${done.body.slice(0, 200)})`);
    t.equal(done.headers['cache-control'], 'no-store');
    t.equal((await b.get('/auth/api-key', { authorization: `Bearer ${(done.json() as { token: string }).token}` })).status, 200, 'the token works');
    const used = (await call(a, 'GET', '/auth/mfa', undefined, (done.json() as { token: string }).token)).json() as { passkeys: Array<{ lastUsedAt: string | null }> };
    t.type(used.passkeys[0]?.lastUsedAt, 'string', 'its last use is recorded');

    const refusals: Array<[string, (o: LoginChallenge['passkeyOptions']) => unknown]> = [
      ['a counter not above the stored one', (o) => authenticator.assert(o, { origin: ORIGIN, step: 0 })],
      ['user not verified', (o) => authenticator.assert(o, { origin: ORIGIN, flags: FLAG_UP })],
      ['user not present', (o) => authenticator.assert(o, { origin: ORIGIN, flags: FLAG_UV })],
      ['another origin', (o) => authenticator.assert(o, { origin: 'http://evil.test:8443' })],
      ['another RP ID', (o) => authenticator.assert(o, { origin: ORIGIN, rpId: 'evil.test' })],
      ['another challenge', (o) => authenticator.assert({ ...o, challenge: Buffer.from('another').toString('base64url') }, { origin: ORIGIN })],
      ['a registration type', (o) => authenticator.assert(o, { origin: ORIGIN, type: 'webauthn.create' })],
      ['another user handle', (o) => authenticator.assert(o, { origin: ORIGIN, userHandle: Buffer.from('org_other').toString('base64url') })],
    ];
    const stale = await loginChallenge(t, a, org);
    const challenges: string[] = [];
    // Each from an address of its own: since issue 45 an open login's password stays counted
    // against its address until a second factor succeeds, and these never do.
    for (const [i, [what, answer]] of refusals.entries()) {
      const address = `203.0.113.${i + 1}`;
      const fresh = await loginChallenge(t, a, org, address);
      challenges.push(fresh.passkeyOptions.challenge);
      const refused = await call(b, 'POST', '/auth/login/mfa', { mfaToken: fresh.mfaToken, passkey: answer(fresh.passkeyOptions) }, undefined, address);
      problem(t, refused, 401, 1117, what);
      t.match((refused.json() as { detail: string }).detail, /passkey/, `${what}: the detail speaks of the passkey`);
    }
    const logged = [a.logs.text(), b.logs.text()].join('\n');
    t.ok(logged.includes('passkey.login_refused'), 'refusals are logged');
    t.notOk(challenges.some((challenge) => logged.includes(challenge)), 'never with a live login\'s challenge');
    // The earlier login's assertion, replayed on a later mfaToken: another challenge.
    const earlier = authenticator.assert(stale.passkeyOptions, { origin: ORIGIN });
    const later = await loginChallenge(t, a, org);
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: later.mfaToken, passkey: earlier }), 401, 1117, 'an assertion of another login');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: later.mfaToken, passkey: { id: 'x' } }), 400, 1200, 'a malformed assertion');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: later.mfaToken, passkey: { ...earlier, response: { ...earlier.response, signature: 'AAAA' } } }), 401, 1117, 'a signature of nothing');
    t.equal((await call(a, 'POST', '/auth/login/mfa', { mfaToken: stale.mfaToken, passkey: earlier })).status, 200, 'the earlier one on its own login, its counter still above');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: stale.mfaToken, passkey: earlier }), 401, 1118, 'and only once');

    // One assertion, four racing requests on two replicas: exactly one 200.
    const raced = await loginChallenge(t, a, org);
    const assertion = authenticator.assert(raced.passkeyOptions, { origin: ORIGIN });
    const answers = await Promise.all([a, b, a, b].map((gw) => call(gw, 'POST', '/auth/login/mfa', { mfaToken: raced.mfaToken, passkey: assertion })));
    t.strictSame(answers.filter((r) => r.status === 200).length, 1, `one 200 of four (${answers.map((r) => r.status).join(',')})`);
    t.ok(answers.every((r) => r.status === 200 || r.status === 401), 'the others 401');

    // A login's challenge lives as long as its mfaToken: 5 minutes.
    const late = await loginChallenge(t, a, org);
    time.advance(5 * 60_000 + 1000);
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: late.mfaToken, passkey: authenticator.assert(late.passkeyOptions, { origin: ORIGIN }) }), 401, 1118, 'an expired login challenge');

    // An authenticator without a counter (0 always): accepted, each login's challenge once.
    const zero = await withPasskey(t, a, b);
    for (let i = 0; i < 2; i++) {
      const login = await loginChallenge(t, a, zero.org);
      const passkey = zero.authenticator.assert(login.passkeyOptions, { origin: ORIGIN, step: 0 });
      const both = await Promise.all([a, b].map((gw) => call(gw, 'POST', '/auth/login/mfa', { mfaToken: login.mfaToken, passkey })));
      t.strictSame(both.map((r) => r.status).sort(), [200, 401], `counter 0, login ${i + 1}: one 200 of two racing`);
    }
  });

  t.test(`${store}: two tenants: another organization's passkey never finishes a login, nor is renamed or removed`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const first = await withPasskey(t, a, b);
    const second = await withPasskey(t, b, a);
    const login = await loginChallenge(t, a, first.org);
    // The second organization's authenticator answers the first's challenge, under the first's name too.
    for (const userHandle of [undefined, Buffer.from(first.org.id).toString('base64url')]) {
      const passkey = second.authenticator.assert(login.passkeyOptions, { origin: ORIGIN, ...(userHandle !== undefined && { userHandle }) });
      problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: login.mfaToken, passkey }), 401, 1117, `another organization's passkey${userHandle === undefined ? '' : ' with this one\'s user handle'}`);
    }
    const forged = { ...first.authenticator.assert(login.passkeyOptions, { origin: ORIGIN }), response: second.authenticator.assert(login.passkeyOptions, { origin: ORIGIN }).response };
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: login.mfaToken, passkey: forged }), 401, 1117, 'this one\'s id over the other\'s signature');
    t.equal((await call(a, 'POST', '/auth/login/mfa', { mfaToken: login.mfaToken, passkey: first.authenticator.assert(login.passkeyOptions, { origin: ORIGIN }) })).status, 200, 'its own passkey');
    problem(t, await call(a, 'PATCH', `/auth/mfa/passkeys/${first.passkey.id}`, { name: 'mine now' }, second.token), 404, 1230, 'renaming another organization\'s');
    problem(t, await call(a, 'DELETE', `/auth/mfa/passkeys/${first.passkey.id}`, { currentPassword: second.org.password, ...(await stepUp(t, a, second.token, second.authenticator)) }, second.token), 404, 1230, 'removing another organization\'s');
    problem(t, await call(a, 'DELETE', `/auth/mfa/passkeys/${first.passkey.id}`, { currentPassword: second.org.password, ...(await stepUp(t, a, second.token, first.authenticator)) }, second.token), 403, 1120, 'nor with its passkey\'s assertion');
    t.equal((await call(b, 'GET', '/auth/mfa', undefined, first.token)).json().passkeys[0].name, 'Passkey 1', 'untouched');
  });

  t.test(`${store}: recovery codes with passkeys only; TOTP beside a passkey; the last factor takes the codes; the operator removes everything`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const { org, token, authenticator, recoveryCodes } = await withPasskey(t, a, b);
    const login = await loginChallenge(t, a, org);
    t.equal((await call(b, 'POST', '/auth/login/mfa', { mfaToken: login.mfaToken, recoveryCode: recoveryCodes[0] })).status, 200, 'a recovery code with a passkey only');
    const again = await loginChallenge(t, a, org);
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: again.mfaToken, recoveryCode: recoveryCodes[0] }), 401, 1117, 'once');
    const regenerated = await call(a, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, ...(await stepUp(t, b, token, authenticator)) }, token);
    t.equal(regenerated.status, 200, 'regenerated with a passkey only');
    const fresh = (regenerated.json() as { recoveryCodes: string[] }).recoveryCodes;

    // TOTP beside the passkey: no new codes; removing it keeps them, and the passkey still works.
    const begun = (await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password, ...(await stepUp(t, b, token, authenticator)) }, token)).json() as { secret: string };
    const { TOTP, Secret } = await import('otpauth');
    const confirmed = await call(b, 'POST', '/auth/mfa/totp/confirm', { code: TOTP.generate({ secret: Secret.fromBase32(begun.secret), timestamp: time.now() }) }, token);
    t.equal(confirmed.status, 200);
    t.strictSame(confirmed.json(), {}, 'no recovery codes: the passkey\'s stay');
    const both = await loginChallenge(t, b, org);
    t.strictSame(both.methods, ['totp', 'recovery_code', 'passkey']);
    time.advance(30_000);
    t.equal((await call(a, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: TOTP.generate({ secret: Secret.fromBase32(begun.secret), timestamp: time.now() }) }, token)).status, 204, 'TOTP removed');
    t.equal((await call(a, 'GET', '/auth/mfa', undefined, token)).json().recoveryCodesLeft, 10, 'the codes stay while a passkey does');
    t.equal((await call(b, 'POST', '/auth/login/mfa', { mfaToken: both.mfaToken, recoveryCode: fresh[1] })).status, 200, 'and work');

    t.equal((await call(b, 'DELETE', `/auth/mfa/passkeys/${authenticator.id}`, { currentPassword: org.password, ...(await stepUp(t, a, token, authenticator)) }, token)).status, 204, 'the last factor removed');
    t.strictSame((await call(a, 'GET', '/auth/mfa', undefined, token)).json(), { methods: [], totp: { enabled: false, pending: false }, recoveryCodesLeft: 0, passkeys: [], offered: { totp: true, passkey: true } });
    t.type(await a.login(org.email, org.password), 'string', 'the password alone logs in again');
    problem(t, await call(a, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password }, token), 409, 1227, 'no recovery codes without a factor');

    // The operator: sees the passkeys, removes every factor, sessions end.
    const kept = await withPasskey(t, a, b);
    const admin = (method: string, path: string) => send(`${a.opsUrl}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const seen = (await admin('GET', `/admin/organizations/${kept.org.id}/mfa`)).json() as { methods: string[]; passkeys: Array<{ name: string; createdAt: string; lastUsedAt: null }> };
    t.strictSame(seen.methods, ['recovery_code', 'passkey']);
    t.strictSame(seen.passkeys.map((p) => p.name), ['Passkey 1']);
    const removed = await admin('DELETE', `/admin/organizations/${kept.org.id}/mfa`);
    t.equal(removed.status, 200);
    t.equal(removed.json().removed, true);
    t.type(await b.login(kept.org.email, kept.org.password), 'string', 'the password alone logs in');
    t.strictSame((await admin('GET', `/admin/organizations/${kept.org.id}/mfa`)).json().passkeys, [], 'no passkey left');
    let status = 200;
    for (const deadline = Date.now() + 5000; status !== 401 && Date.now() < deadline; ) {
      status = (await b.get('/auth/api-key', { authorization: `Bearer ${kept.token}` })).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(status, 401, 'its sessions ended');
  });
}
