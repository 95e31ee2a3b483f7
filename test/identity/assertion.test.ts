import { ScopeTable } from '../../src/authz/scopes.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';

/** The built-in table's scopes (what the request paths read with no routes file). */
const BUILTIN_SCOPE_TABLE = new ScopeTable(new Map(Object.entries(BUILTIN_ROUTES_FILE.scopes ?? {})));
import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import t from 'tap';
import { ALL_SCOPES_GRANT, grantOf } from '../../src/authz/scopes.js';
import type { Principal } from '../../src/credentials/principal.js';
import { createIdentityAsserter } from '../../src/identity/assertion.js';
import { keyProblem, loadIdentityKeys } from '../../src/identity/signing-keys.js';
import { pemBegin } from '../helpers/identity-key.js';

/** identity/: the keys (PEM and JWK, ES256 and EdDSA, the JWKS) and the signer's memo. */

const pem = (key: import('node:crypto').KeyObject, type: 'pkcs8' | 'spki') => key.export({ format: 'pem', type }) as string;

t.test('keys: PEM or JWK, P-256 or Ed25519; the JWKS lists the signing key first, then the published ones, once each', async (t) => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ed = generateKeyPairSync('ed25519');
  const fromPem = await loadIdentityKeys(pem(ec.privateKey, 'pkcs8'), [pem(ed.publicKey, 'spki'), pem(ec.publicKey, 'spki'), JSON.stringify(ed.publicKey.export({ format: 'jwk' }))]);
  t.equal(fromPem.signing.alg, 'ES256');
  t.same(fromPem.jwks.keys.map((k) => k.alg), ['ES256', 'EdDSA'], 'the signing key, then the published one; repeats dropped');
  for (const key of fromPem.jwks.keys) {
    t.match(key, { use: 'sig', kid: /^[A-Za-z0-9_-]{43}$/ });
    t.notOk('d' in key, 'public only');
  }
  const fromJwk = await loadIdentityKeys(JSON.stringify(ed.privateKey.export({ format: 'jwk' })), []);
  t.equal(fromJwk.signing.alg, 'EdDSA');
  t.equal(fromJwk.signing.kid, fromPem.jwks.keys[1]!.kid, 'the kid is the thumbprint: the same key has the same kid in any form');
  const generated = await loadIdentityKeys(undefined, []);
  t.equal(generated.signing.alg, 'ES256', 'development: a P-256 key made up');

  t.equal(keyProblem(pem(ec.privateKey, 'pkcs8'), 'private'), undefined);
  t.equal(keyProblem(ec.privateKey.export({ format: 'pem', type: 'sec1' }) as string, 'private'), undefined, 'SEC1 too (what helm genPrivateKey writes)');
  t.match(keyProblem(pem(ec.publicKey, 'spki'), 'private'), /not a private key/);
  t.match(keyProblem(pem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'pkcs8'), 'private'), /neither a P-256/);
  t.match(keyProblem(pem(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey, 'pkcs8'), 'private'), /neither a P-256/);
  // A PEM frame around garbage (the boundary built at run time: see pemBegin).
  const problem = keyProblem(`${pemBegin('PRIVATE KEY')}\nsecret-material\n${pemBegin('PRIVATE KEY').replace('BEGIN', 'END')}`, 'private');
  t.match(problem, /not a private key/);
  t.notMatch(problem, /secret-material/, 'the text is never quoted');
});

t.test('the signer: one signing for concurrent requests of a credential, the organization read once, undefined when it is gone', async (t) => {
  const keys = await loadIdentityKeys(undefined, []);
  let reads = 0;
  let now = 1_900_000_000_000;
  const asserter = createIdentityAsserter({
    key: keys.signing,
    issuer: 'authgate',
    audience: 'http://svc',
    ttlSeconds: 60,
    environment: 'production',
    now: () => now,
    organization: async (orgId) => {
      reads++;
      return orgId === 'org_gone' ? undefined : { name: 'Acme', email: 'owner@acme.test' };
    },
    max: 100,
    scopes: () => BUILTIN_SCOPE_TABLE,
  });
  const key: Principal = { orgId: 'org_1', via: 'api_key', credentialId: 'key_1', scopes: grantOf(['accounts:read']) };
  t.equal(asserter.current(key), undefined, 'nothing kept yet');
  const tokens = await Promise.all(Array.from({ length: 20 }, () => asserter.sign(key)));
  t.equal(new Set(tokens).size, 1, 'one assertion for 20 concurrent requests');
  t.equal(reads, 1, 'the organization read once');
  t.equal(asserter.current(key), tokens[0]);
  const { payload } = await jwtVerify(tokens[0]!, createLocalJWKSet(keys.jwks as { keys: import('jose').JWK[] }), { issuer: 'authgate', audience: 'http://svc', currentDate: new Date(now) });
  t.match(payload, { sub: 'org_1', name: 'Acme', email: 'owner@acme.test', environment: 'production', kind: 'api_key', key_id: 'key_1', scope: 'accounts:read' });

  t.equal(asserter.current({ ...key, scopes: ALL_SCOPES_GRANT }), undefined, 'other scopes: not the kept one');
  const session: Principal = { orgId: 'org_1', via: 'jwt', credentialId: 'sess_1', scopes: ALL_SCOPES_GRANT };
  await asserter.sign(session);
  t.equal(reads, 1, "the organization's name and e-mail are kept for its other credentials");
  t.equal(asserter.current(key, 'http://other'), undefined, 'another audience: not the kept one (found for the default before)');
  t.equal(asserter.current(key), tokens[0], 'and the default audience\'s again');
  now += 30_000;
  t.equal(asserter.current(key), undefined, 'half the lifetime gone: sign again');
  const again = await asserter.sign(key);
  t.not(again, tokens[0]);
  t.equal(asserter.current(key), again, 'the one signed since is found');
  t.equal(asserter.current(key), again);
  t.equal(await asserter.sign({ orgId: 'org_gone', via: 'api_key', credentialId: 'key_9', scopes: ALL_SCOPES_GRANT }), undefined, 'an organization that is gone');
  t.equal(asserter.current({ orgId: 'org_gone', via: 'api_key', credentialId: 'key_9', scopes: ALL_SCOPES_GRANT }), undefined);
});

t.test('the signer forgets a profile change (issue 31): that organization\'s profile and assertions go, others stay; a read the change overtook is not kept', async (t) => {
  const keys = await loadIdentityKeys(undefined, []);
  const names = new Map([['org_a', 'Acme'], ['org_b', 'Beta']]);
  let release: (() => void) | undefined;
  const asserter = createIdentityAsserter({
    key: keys.signing,
    issuer: 'authgate',
    audience: 'http://svc',
    ttlSeconds: 60,
    environment: 'production',
    now: () => 1_900_000_000_000,
    organization: async (orgId) => {
      const name = names.get(orgId)!;
      if (release === undefined && orgId === 'org_slow') await new Promise<void>((resolve) => (release = resolve));
      return { name: name ?? 'Slow', email: `${orgId}@example.test` };
    },
    max: 100,
    scopes: () => BUILTIN_SCOPE_TABLE,
  });
  const jwks = createLocalJWKSet(keys.jwks as { keys: import('jose').JWK[] });
  const principal = (orgId: string, credentialId: string): Principal => ({ orgId, via: 'api_key', credentialId, scopes: ALL_SCOPES_GRANT });
  const nameIn = async (token: string | undefined) => (await jwtVerify(token!, jwks, { audience: 'http://svc', currentDate: new Date(1_900_000_000_000) })).payload['name'];
  const [a1, a2, b] = [principal('org_a', 'key_a1'), principal('org_a', 'key_a2'), principal('org_b', 'key_b')];
  for (const p of [a1, a2, b]) await asserter.sign(p);
  t.ok(asserter.current(a1) && asserter.current(a2) && asserter.current(b), 'all kept');

  names.set('org_a', 'Acme Renamed');
  asserter.invalidate([{ kind: 'session', cacheKey: 'org_a' }, { kind: 'rate_limits', cacheKey: 'org_a' }]);
  t.ok(asserter.current(a1), 'other kinds pass it by');
  asserter.invalidate([{ kind: 'profile', cacheKey: 'org_a' }]);
  t.equal(asserter.current(a1), undefined, "the organization's assertions go");
  t.equal(asserter.current(a2), undefined);
  t.ok(asserter.current(b), "another organization's stay");
  t.equal(await nameIn(await asserter.sign(a1)), 'Acme Renamed', 'signed anew with the profile read again');

  asserter.invalidate('all');
  t.equal(asserter.current(b), undefined, "'all' drops everything");

  // A read under way when the change is heard: used for that request, never kept.
  const slow = principal('org_slow', 'key_slow');
  const pending = asserter.sign(slow);
  await new Promise((resolve) => setImmediate(resolve));
  asserter.invalidate([{ kind: 'profile', cacheKey: 'org_slow' }]);
  release!();
  t.ok(await pending, 'the request still gets one');
  t.equal(asserter.current(slow), undefined, 'but it is not kept');
});
