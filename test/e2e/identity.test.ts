import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import t from 'tap';
import { LEGACY_SCOPES as SCOPES } from '../../src/authz/scopes.js';
import { send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { rawRequest, requestText } from '../helpers/raw-http.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * The signed identity, end to end: real gateways on loopback forwarding to a real upstream, the
 * assertion each request carried verified with jose against the JWKS the gateway serves over HTTP.
 */

const bearer = (credential: string) => ({ ...UA, authorization: `Bearer ${credential}` });
const dir = mkdtempSync(join(tmpdir(), 'authgate-identity-'));
let files = 0;
/** A key written to a file, PEM: the private half (PKCS#8) or the public one (SPKI). */
function keyFile(key: KeyObject, type: 'pkcs8' | 'spki'): string {
  const file = join(dir, `key-${++files}.pem`);
  writeFileSync(file, key.export({ format: 'pem', type }) as string);
  return file;
}

/** The identity header of the last request the upstream received. */
function lastAssertion(gw: StartedGateway): string {
  const value = gw.upstream.requests.at(-1)?.headers['x-authgate-identity'];
  if (typeof value !== 'string') throw new Error(`no assertion upstream: ${JSON.stringify(value)}`);
  return value;
}

async function organizationWithKey(gw: StartedGateway, name: string) {
  const org = await gw.createOrganization({ name });
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  return { org, token, key };
}

t.test('every forwarded request carries an assertion that verifies with the JWKS, with every claim right', async (t) => {
  const gw = await startGateway(t);
  const { org, token, key } = await organizationWithKey(gw, 'Acme Unicode Ltd – ÄÖÜ 株式会社');
  const jwks = createRemoteJWKSet(new URL(`${gw.opsUrl}/.well-known/jwks.json`));
  const audience = new URL(gw.upstream.url).origin;
  const before = Math.floor(Date.now() / 1000);

  t.equal((await gw.get('/accounts/acc_1?x=1', bearer(key.apiKey))).status, 200);
  const viaKey = lastAssertion(gw);
  const { payload, protectedHeader } = await jwtVerify(viaKey, jwks, { issuer: 'authgate', audience, algorithms: ['ES256'] });
  t.match(protectedHeader, { alg: 'ES256', typ: 'JWT', kid: /^[A-Za-z0-9_-]{43}$/ });
  t.match(payload, { iss: 'authgate', aud: audience, sub: org.id, name: 'Acme Unicode Ltd – ÄÖÜ 株式会社', email: org.email, environment: 'sandbox', kind: 'api_key', key_id: key.id, scope: SCOPES.join(' ') });
  t.equal(payload.exp! - payload.iat!, 60, 'lives 60 s');
  t.ok(payload.iat! >= before - 1 && payload.iat! <= Math.ceil(Date.now() / 1000), 'issued now');
  t.match(payload.jti, /^[0-9a-f-]{36}$/);
  t.same(Object.keys(payload).sort(), ['aud', 'email', 'environment', 'exp', 'iat', 'iss', 'jti', 'key_id', 'kind', 'name', 'scope', 'sub']);
  t.equal(gw.upstream.requests.at(-1)?.headers['x-organization-id'], org.id, 'x-organization-id still goes along');

  t.equal((await gw.get('/organization/me', bearer(token))).status, 200);
  const viaToken = await jwtVerify(lastAssertion(gw), jwks, { issuer: 'authgate', audience });
  t.match(viaToken.payload, { sub: org.id, kind: 'jwt', scope: SCOPES.join(' ') });
  t.notOk('key_id' in viaToken.payload, 'no key id for a login token');

  for (const assertion of [viaKey, lastAssertion(gw)]) {
    t.notOk(assertion.includes(key.apiKey) || assertion.includes(token), 'no credential inside');
    const text = JSON.stringify(decodeJwt(assertion));
    for (const secret of [key.apiKey, token, org.password, '$argon2']) t.notOk(text.includes(secret), 'no secret in the claims');
  }

  const jwksAnswer = await send(`${gw.opsUrl}/.well-known/jwks.json`);
  t.match(jwksAnswer.headers['content-type'], /^application\/jwk-set\+json/);
  t.match(jwksAnswer.headers['cache-control'], /max-age=300/);
  const published = jwksAnswer.json() as JSONWebKeySet;
  t.equal(published.keys.length, 1);
  t.match(published.keys[0], { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: protectedHeader.kid });
  t.notOk('d' in published.keys[0]!, 'the public half only');
  // On the public port too by default (issue 27): upstreams fetch it there, never from the ops port
  // with the admin API; the same body, from the one route (src/routes/jwks.ts).
  const onPublic = await gw.get('/.well-known/jwks.json');
  t.equal(onPublic.status, 200, 'on the public port by default, with no credential');
  t.match(onPublic.headers['content-type'], /^application\/jwk-set\+json/);
  t.same(onPublic.json(), published, 'the same keys as the ops port');
  const closed = await startGateway(t, { env: { AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'off' } });
  t.equal((await closed.get('/.well-known/jwks.json')).status, 404, 'not on the public port when set off');
});

t.test('no client-sent assertion or x-authgate-* header ever reaches the upstream', async (t) => {
  const gw = await startGateway(t);
  const { org, key } = await organizationWithKey(gw, 'Real');
  const victim = await organizationWithKey(gw, 'Victim');
  // A forgery: a well-formed assertion for the victim, signed with the attacker's own key.
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { SignJWT } = await import('jose');
  const forged = await new SignJWT({ name: 'Victim', email: victim.org.email, kind: 'api_key', scope: SCOPES.join(' ') })
    .setProtectedHeader({ alg: 'ES256' }).setSubject(victim.org.id).setIssuer('authgate').setAudience(new URL(gw.upstream.url).origin).setIssuedAt().setExpirationTime('1h').sign(privateKey);
  // Raw bytes on a socket: the header names exactly as an attacker spells them.
  const port = Number(new URL(gw.publicUrl).port);
  const res = await rawRequest(port, requestText('GET', '/accounts', [
    ['User-Agent', 'x'], ['Authorization', `Bearer ${key.apiKey}`],
    ['X-Authgate-Identity', forged], ['x-authgate-identity', forged], ['X-AUTHGATE-ADMIN', 'yes'], ['x-authgate-', 'empty'], ['Connection', 'x-authgate-identity'],
  ]));
  t.equal(res.status, 200, res.raw.slice(0, 300));
  const received = gw.upstream.requests.at(-1)!;
  const ours = received.rawHeaders.filter((_, i) => i % 2 === 0 && received.rawHeaders[i]!.toLowerCase().startsWith('x-authgate-'));
  t.same(ours, ['x-authgate-identity'], 'exactly one x-authgate-* header: the gateway\'s');
  t.not(received.headers['x-authgate-identity'], forged);
  const { payload } = await jwtVerify(lastAssertion(gw), createRemoteJWKSet(new URL(`${gw.opsUrl}/.well-known/jwks.json`)), { issuer: 'authgate', audience: new URL(gw.upstream.url).origin });
  t.equal(payload.sub, org.id, 'the real organization, not the victim');
  await t.rejects(jwtVerify(forged, createRemoteJWKSet(new URL(`${gw.opsUrl}/.well-known/jwks.json`))), 'and the forgery does not verify with the JWKS');
});

t.test('rotation: publish the next key, sign with it, drop the old one; both verify during the overlap', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const oldKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const newKey = generateKeyPairSync('ed25519');
  const env = (signing: KeyObject, published: KeyObject[]) => ({
    AUTHGATE_IDENTITY_KEY_FILE: keyFile(signing, 'pkcs8'),
    ...(published.length > 0 && { AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES: published.map((key) => keyFile(key, 'spki')).join(',') }),
  });
  // Step 1: the old key signs, the new one is published. Step 2: the new one signs, the old one is
  // still published. Step 3: the old one is gone.
  const step1 = await startGateway(t, { upstream, env: env(oldKey.privateKey, [newKey.publicKey]) });
  const step2 = await startGateway(t, { upstream, env: env(newKey.privateKey, [oldKey.publicKey]) });
  const step3 = await startGateway(t, { upstream, env: env(newKey.privateKey, []) });
  const jwksOf = async (gw: StartedGateway) => (await send(`${gw.opsUrl}/.well-known/jwks.json`)).json() as JSONWebKeySet;
  const audience = new URL(upstream.url).origin;

  const assertions: string[] = [];
  for (const gw of [step1, step2]) {
    const { key } = await organizationWithKey(gw, 'Rotating');
    t.equal((await gw.get('/accounts', bearer(key.apiKey))).status, 200);
    assertions.push(lastAssertion(gw));
  }
  t.equal(decodeProtectedHeader(assertions[0]!).alg, 'ES256', 'signed with the old key');
  t.equal(decodeProtectedHeader(assertions[1]!).alg, 'EdDSA', 'then with the new one');
  const [set1, set2, set3] = [await jwksOf(step1), await jwksOf(step2), await jwksOf(step3)];
  t.equal(set1.keys.length, 2);
  t.same(set1.keys.map((k) => k.kid).sort(), set2.keys.map((k) => k.kid).sort(), 'the same two keys published during the overlap');
  for (const set of [set1, set2]) {
    for (const assertion of assertions) {
      await t.resolves(jwtVerify(assertion, createLocalJWKSet(set), { issuer: 'authgate', audience }), 'either assertion verifies with either JWKS');
    }
  }
  t.equal(set3.keys.length, 1);
  await t.resolves(jwtVerify(assertions[1]!, createLocalJWKSet(set3), { issuer: 'authgate', audience }));
  await t.rejects(jwtVerify(assertions[0]!, createLocalJWKSet(set3), { issuer: 'authgate', audience }), 'the old key\'s assertions stop verifying once it is dropped');
});

t.test('kept per credential and re-signed once half its lifetime passed, or at once when the scopes change', async (t) => {
  let now = Date.parse('2030-01-01T00:00:00.000Z');
  const gw = await startGateway(t, { deps: { now: () => now } });
  const { token, key } = await organizationWithKey(gw, 'Clocked');
  const jwks = createRemoteJWKSet(new URL(`${gw.opsUrl}/.well-known/jwks.json`));
  const verify = (assertion: string) => jwtVerify(assertion, jwks, { issuer: 'authgate', audience: new URL(gw.upstream.url).origin, currentDate: new Date(now) });
  const forward = async () => {
    t.equal((await gw.get('/accounts', bearer(key.apiKey))).status, 200);
    return lastAssertion(gw);
  };
  const first = await forward();
  t.equal(await forward(), first, 'the same assertion for the next request');
  now += 29_999;
  t.equal(await forward(), first, 'until half its 60 s have passed');
  now += 1;
  const second = await forward();
  t.not(second, first, 're-signed at half its lifetime');
  t.not((await verify(second)).payload.jti, (await verify(first)).payload.jti);
  t.equal((await verify(second)).payload.iat, Math.floor(now / 1000));

  const narrowed = await send(`${gw.publicUrl}/auth/api-key/${key.id}`, { method: 'PATCH', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'] }) });
  t.equal(narrowed.status, 200);
  const third = await forward();
  t.not(third, second, 'a narrowing is signed anew at once');
  t.equal((await verify(third)).payload.scope, 'accounts:read');
});

t.test('AUTHGATE_IDENTITY_ASSERTION=off: no assertion and no JWKS; AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT=on serves it publicly', async (t) => {
  const off = await startGateway(t, { env: { AUTHGATE_IDENTITY_ASSERTION: 'off' } });
  const { key } = await organizationWithKey(off, 'Plain');
  const forged = 'eyJhbGciOiJub25lIn0.e30.';
  t.equal((await off.get('/accounts', { ...bearer(key.apiKey), 'x-authgate-identity': forged })).status, 200);
  t.equal(off.upstream.requests.at(-1)?.headers['x-authgate-identity'], undefined, 'none sent, and the client\'s still removed');
  t.equal((await send(`${off.opsUrl}/.well-known/jwks.json`)).status, 404);

  const open = await startGateway(t, { env: { AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'on', AUTHGATE_IDENTITY_AUDIENCE: 'https://accounts.internal', AUTHGATE_IDENTITY_TTL_SECONDS: '120' } });
  const onPublic = await open.get('/.well-known/jwks.json');
  t.equal(onPublic.status, 200, 'no credential needed');
  t.same(onPublic.json(), (await send(`${open.opsUrl}/.well-known/jwks.json`)).json(), 'the same keys as the ops port');
  const { key: openKey } = await organizationWithKey(open, 'Open');
  t.equal((await open.get('/accounts', bearer(openKey.apiKey))).status, 200);
  const { payload } = await jwtVerify(lastAssertion(open), createLocalJWKSet(onPublic.json() as JSONWebKeySet), { issuer: 'authgate', audience: 'https://accounts.internal' });
  t.equal(payload.exp! - payload.iat!, 120, 'the configured audience and lifetime');
});

t.test('across replicas on one Redis: a key made on A is asserted by B with the organization\'s name and e-mail', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const keyFileShared = keyFile(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'pkcs8');
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_IDENTITY_KEY_FILE: keyFileShared };
  const a = await startGateway(t, { upstream, env });
  const b = await startGateway(t, { upstream, env });
  const { org, key } = await organizationWithKey(a, 'Replicated');
  t.equal((await b.get('/organization/me', bearer(key.apiKey))).status, 200);
  const { payload } = await jwtVerify(lastAssertion(b), createRemoteJWKSet(new URL(`${a.opsUrl}/.well-known/jwks.json`)), { issuer: 'authgate', audience: new URL(upstream.url).origin });
  t.match(payload, { sub: org.id, name: 'Replicated', email: org.email, key_id: key.id }, "B's assertion verifies with A's JWKS: one key for every replica");
});
