// Provider tokens (issue 49) against a real OpenID provider on loopback (panva's oidc-provider,
// JWT access tokens by client credentials and resource indicators), two issuers at once: the
// happy path on the public port (both request paths) and the authorization port; every refusal
// the issue names; organizations mapped by external id (admin API) or fixed; deletion.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { SignJWT, importJWK, type JWK } from 'jose';
import type { RoutesFile } from '../../src/route-table/types.js';
import { listenAuthz } from '../helpers/authz.js';
import { ADMIN_TOKEN, send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const API = 'https://api.example.test';

function routesFile(corp: TestProvider, partner: TestProvider, fixedOrg: string): RoutesFile {
  return {
    version: 1,
    scopes: { 'orders:read': 'Read orders', 'orders:write': 'Place orders' },
    issuers: {
      corp: { issuer: corp.issuer, audiences: [API], organization: { claim: 'org_id' }, requireType: 'at+jwt', scopeMap: { 'read:orders': 'orders:read' }, keys: { cooldownSeconds: 1 } },
      partner: { issuer: partner.issuer, jwksUri: `${partner.issuer}/jwks`, audiences: [API], algorithms: ['ES256'], organization: { fixed: fixedOrg }, keys: { cooldownSeconds: 1 } },
    },
    routes: [
      { id: 'orders', path: '/orders', match: 'subtree', credentials: ['api_key', 'issuer:corp', 'issuer:partner'], methods: { GET: 'orders:read', POST: 'orders:write' } },
      { id: 'corp-only', path: '/corp', match: 'subtree', credentials: ['issuer:corp'], methods: { GET: 'orders:read' } },
    ],
  };
}

async function admin(gw: StartedGateway, method: string, path: string, body?: unknown) {
  return send(`${gw.opsUrl}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never: ${what}`);
}

async function metric(gw: StartedGateway, line: string): Promise<number> {
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const found = text.split('\n').find((l) => l.startsWith(line));
  return found === undefined ? 0 : Number(found.slice(found.lastIndexOf(' ') + 1));
}

async function sign(key: JWK & { kid: string }, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const alg = (header.alg ?? key.alg) as string;
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'at+jwt', kid: key.kid, ...header }).sign(await importJWK({ ...key, alg }, alg));
}

t.test('provider tokens of two issuers on both ports', async (t) => {
  const corp = await startTestProvider();
  const partner = await startTestProvider({ alg: 'ES256' });
  t.teardown(async () => {
    await corp.close().catch(() => {});
    await partner.close();
  });
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());

  // The fixed organization must exist before the table names it: a gateway without issuers makes it.
  const gw0 = await startGateway(t);
  void gw0;
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' }, upstream, deps: { routes: tableOf(routesFile(corp, partner, 'org_placeholder'), upstream.url) } });
  const org = await gw.createOrganization();
  const fixedOrg = await gw.createOrganization();
  // The partner issuer maps every token to fixedOrg: the table is swapped in with its id.
  gw.gateway.routes.swap(tableOf(routesFile(corp, partner, fixedOrg.id), upstream.url));
  const authz = await listenAuthz(gw);
  const externalId = `org_${randomUUID().slice(0, 8)}`;
  const patched = await admin(gw, 'PATCH', `/admin/organizations/${org.id}`, { externalIds: { corp: externalId } });
  t.equal(patched.status, 200, patched.body);
  t.same(patched.json().externalIds, { corp: externalId });
  t.equal((await admin(gw, 'PATCH', `/admin/organizations/${fixedOrg.id}`, { externalIds: { corp: externalId } })).json().code, 1340, 'unique per issuer');
  t.equal((await admin(gw, 'PATCH', `/admin/organizations/${fixedOrg.id}`, { externalIds: { nobody: 'x' } })).json().code, 1260, 'an issuer the file does not declare');

  const bearer = (token: string) => ({ ...UA, authorization: `Bearer ${token}` });
  const get = (path: string, token: string) => gw.get(path, bearer(token));
  const edge = (uri: string, token: string) => send(`${authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'GET', 'x-original-uri': uri, ...bearer(token) } });

  await t.test('keys arrive in the background; then the happy path on both ports, both issuers', async (t) => {
    const token = await corp.token({ org: externalId, resource: API });
    await waitFor(async () => (await get('/orders/1', token)).status === 200, 'corp token accepted');
    const seen = upstream.requests.at(-1)!;
    t.equal(seen.headers['x-organization-id'], org.id, 'the organization injected');
    t.notOk(JSON.stringify(seen.headers).includes(token), 'the token never reaches the upstream');
    t.equal((await get('/orders/2', token)).status, 200, 'warm: from the memo (fast lane or framework)');
    t.equal((await edge('/orders/3', token)).status, 200, 'the authorization port');
    t.equal((await send(`${gw.publicUrl}/orders/4`, { method: 'POST', headers: bearer(token) })).status, 403, 'without orders:write: the scope check as for keys');

    const ptoken = await partner.token({ org: 'ignored', resource: API });
    await waitFor(async () => (await get('/orders/5', ptoken)).status === 200, 'partner token accepted');
    t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], fixedOrg.id, 'organization: {fixed}');
    t.equal((await edge('/orders/6', ptoken)).status, 200);
    const refused = await get('/corp/1', ptoken);
    t.equal(refused.status, 403, 'an issuer the route does not list');
    t.equal(refused.json().code, 1141);
    t.equal((await edge('/corp/1', ptoken)).status, 403, 'the same on the authorization port');
  });

  await t.test('refusals', async (t) => {
    const key = corp.key;
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: corp.issuer, aud: API, sub: 'svc', org_id: externalId, scope: 'orders:read', iat: now, exp: now + 300 };
    const good = await sign(key, claims);
    t.equal((await get('/orders/ok', good)).status, 200, 'a token signed by hand with the provider key passes: the refusals below are each one change');
    t.equal((await get('/orders/ok', await sign(key, { ...claims, jti: 'no-kid' }, { kid: undefined }))).status, 200, 'a token without kid: tried against the keys of its type');
    t.equal((await get('/orders/ok', await sign(key, claims, { alg: 'RS384' }))).status, 401, 'an alg the issuer does not allow (RS384 with the same RSA key)');
    t.equal((await get('/orders/ok', await sign(key, { ...claims, scope: undefined, scp: ['read:orders'] }))).status, 200, 'scp as an array, renamed by scopeMap');
    const own = await gw.get('/auth/api-key', bearer(await sign(key, { ...claims, scope: 'keys:read keys:write orders:read' })));
    t.equal(own.status, 403, "the gateway's own API: a provider never grants keys:*");
    const cases: [string, string, number, number][] = [
      ['wrong iss', await sign(key, { ...claims, iss: 'http://127.0.0.1:1' }), 401, 1102],
      ['wrong aud (a real token for another resource)', await corp.token({ org: externalId, resource: 'https://other.example.test' }), 401, 1102],
      ['expired', await sign(key, { ...claims, iat: now - 900, exp: now - 600 }), 401, 1102],
      ['not yet valid', await sign(key, { ...claims, nbf: now + 600 }), 401, 1102],
      ['an ID token (typ JWT) where at+jwt is required', await sign(key, claims, { typ: 'JWT' }), 401, 1102],
      ['an org claim mapping to no organization', await corp.token({ org: 'org_nobody', resource: API }), 401, 1140],
      ['no org claim', await sign(key, { ...claims, org_id: undefined }), 401, 1140],
    ];
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    cases.push(['alg none', `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claims)}.`, 401, 1102]);
    const publicJwk: JWK = { kty: key.kty, n: key.n, e: key.e };
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: key.kid }).sign(new TextEncoder().encode(JSON.stringify(publicJwk)));
    cases.push(['HS256 signed with the public key', hs, 401, 1102]);
    for (const [what, token, status, code] of cases) {
      const res = await get('/orders/x', token);
      t.equal(res.status, status, what);
      t.equal(res.json().code, code, `${what}: code`);
      t.equal((await edge('/orders/x', token)).status, status, `${what}: the authorization port too`);
    }
    t.ok((await metric(gw, 'authgate_issuer_token_refusals_total{issuer="corp",reason="type"')) >= 1, 'refusals counted by issuer and reason');
  });

  await t.test('rotation: a new kid is accepted without a restart, with one fetch', async (t) => {
    await corp.rotate();
    const before = corp.jwksServed();
    const token = await corp.token({ org: externalId, resource: API });
    // Within the cooldown of the last fetch an unknown kid is refused; after it, one fetch takes the new key.
    await waitFor(async () => (await get('/orders/rotated', token)).status === 200, 'the rotated key accepted');
    t.equal(corp.jwksServed() - before, 1, 'one fetch');
  });

  await t.test('a flood of unknown kids costs at most one fetch per cooldown', async (t) => {
    const before = corp.jwksServed();
    const started = Date.now();
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 40; i++) {
      const forged = await sign({ ...corp.key, kid: `made-up-${i}` }, { iss: corp.issuer, aud: API, sub: 's', org_id: externalId, iat: now, exp: now + 60 });
      t.equal((await get('/orders/flood', forged)).status, 401);
    }
    const seconds = (Date.now() - started) / 1000;
    t.ok(corp.jwksServed() - before <= Math.ceil(seconds) + 1, `fetches ${corp.jwksServed() - before} within ${Math.ceil(seconds) + 1} (cooldown 1 s, ${seconds.toFixed(1)} s)`);
  });

  await t.test('deleting the organization refuses its provider tokens at once', async (t) => {
    const token = await corp.token({ org: externalId, resource: API });
    t.equal((await get('/orders/before', token)).status, 200);
    t.equal((await admin(gw, 'DELETE', `/admin/organizations/${org.id}`)).status, 204);
    const after = await get('/orders/after', token);
    t.equal(after.status, 401);
    t.equal(after.json().code, 1140);
    t.equal((await edge('/orders/after', token)).status, 401);
  });
});

t.test('the provider down: stale keys within the bound, then 503 with Retry-After, then recovery', async (t) => {
  const corp = await startTestProvider();
  const partner = await startTestProvider({ alg: 'ES256' });
  t.teardown(async () => {
    await corp.close().catch(() => {});
    await partner.close();
  });
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const file = routesFile(corp, partner, 'org_unused');
  const bounded: RoutesFile = { ...file, issuers: { ...file.issuers, corp: { ...file.issuers!.corp!, keys: { refreshSeconds: 1, cooldownSeconds: 1, maxStaleSeconds: 3 } } } };
  const gw = await startGateway(t, { upstream, deps: { routes: tableOf(bounded, upstream.url) } });
  const org = await gw.createOrganization();
  t.equal((await admin(gw, 'PATCH', `/admin/organizations/${org.id}`, { externalIds: { corp: 'org_down' } })).status, 200);
  const fresh = () => corp.token({ org: 'org_down', resource: API });
  const tokens = await Promise.all(Array.from({ length: 3 }, fresh));
  const get = (token: string) => gw.get('/orders/1', { authorization: `Bearer ${token}` });
  await waitFor(async () => (await get(tokens[0]!)).status === 200, 'keys arrived');

  await corp.stop();
  // A token never seen before is verified with the held keys: within maxStaleSeconds of the last good fetch.
  t.equal((await get(tokens[1]!)).status, 200, 'stale keys serve within the bound');
  let refused: Awaited<ReturnType<typeof get>> | undefined;
  await waitFor(async () => {
    const res = await get(await signUnseen(corp, 'org_down'));
    if (res.status === 503) refused = res;
    return res.status === 503;
  }, '503 once the keys are older than the bound');
  t.equal(refused!.json().code, 1540);
  t.ok(Number(refused!.headers['retry-after']) >= 1, 'Retry-After');
  t.equal((await get(tokens[0]!)).status, 200, 'a token verified before is kept until its exp, like a login token');

  await corp.start();
  await waitFor(async () => (await get(tokens[2]!)).status === 200, 'recovered once the provider answers');
});

/** A token signed with the provider's key that the gateway has not seen (so it must be verified now). */
async function signUnseen(provider: TestProvider, org: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return sign(provider.key, { iss: provider.issuer, aud: API, sub: randomUUID(), org_id: org, scope: 'orders:read', iat: now, exp: now + 300 });
}

t.test("a provider token's scopes are intersected with its organization's plan (issue 47), on both ports", async (t) => {
  const corp = await startTestProvider();
  const partner = await startTestProvider({ alg: 'ES256' });
  t.teardown(async () => {
    await corp.close();
    await partner.close();
  });
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const file = routesFile(corp, partner, 'org_unused');
  const planned: RoutesFile = { ...file, plans: { basic: { scopes: ['orders:read'] } }, defaultPlan: 'basic' };
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' }, upstream, deps: { routes: tableOf(planned, upstream.url) } });
  const authz = await listenAuthz(gw);
  const org = await gw.createOrganization();
  t.equal((await admin(gw, 'PATCH', `/admin/organizations/${org.id}`, { externalIds: { corp: 'org_planned' } })).status, 200);
  const token = await corp.token({ org: 'org_planned', resource: API, scope: 'orders:read orders:write' });
  const bearer = { ...UA, authorization: `Bearer ${token}` };
  await waitFor(async () => (await gw.get('/orders/1', bearer)).status === 200, 'orders:read, in the plan');
  const write = await send(`${gw.publicUrl}/orders/1`, { method: 'POST', headers: bearer });
  t.equal(write.status, 403, 'orders:write: the token holds it, the plan does not');
  t.equal(write.json().code, 1106);
  const edge = await send(`${authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'POST', 'x-original-uri': '/orders/1', ...bearer } });
  t.equal(edge.status, 403, 'the same on the authorization port');
});

t.test('an external id at an issuer the file no longer declares can still be removed (null), never set', async (t) => {
  const corp = await startTestProvider();
  const partner = await startTestProvider({ alg: 'ES256' });
  t.teardown(async () => {
    await corp.close();
    await partner.close();
  });
  const file = routesFile(corp, partner, 'org_unused');
  const gw = await startGateway(t, { deps: { routes: tableOf(file, 'http://127.0.0.1:9') } });
  const org = await gw.createOrganization();
  t.equal((await admin(gw, 'PATCH', `/admin/organizations/${org.id}`, { externalIds: { corp: 'org_left' } })).status, 200);
  // The operator takes corp out of the file: the organization's id there is left behind.
  const { corp: _dropped, ...otherIssuers } = file.issuers!;
  void _dropped;
  gw.gateway.routes.swap(tableOf({ ...file, issuers: otherIssuers, routes: [{ ...file.routes[0]!, credentials: ['api_key', 'issuer:partner'] }] }, 'http://127.0.0.1:9'));
  const set = await admin(gw, 'PATCH', `/admin/organizations/${org.id}`, { externalIds: { corp: 'org_other' } });
  t.equal(set.json().code, 1260, 'setting one there is refused');
  const removed = await admin(gw, 'PATCH', `/admin/organizations/${org.id}`, { externalIds: { corp: null } });
  t.equal(removed.status, 200, removed.body);
  t.same(removed.json().externalIds ?? {}, {}, 'removed');
});
