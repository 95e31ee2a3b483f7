import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { calculateJwkThumbprint, exportJWK, SignJWT } from 'jose';
import { startWarnings } from '../src/config/check.js';
import { EXAMPLE_UPSTREAM, startExampleUpstream } from '../src/example-upstream.js';
import { buildGateway } from '../src/gateway.js';
import { ADMIN_TOKEN, send, testConfig, UA } from './helpers/gateway.js';
import { startGatewayProcess } from './helpers/gateway-process.js';
import { captureLogs } from './helpers/log-capture.js';
import { freePort } from './helpers/redis.js';

/**
 * example-upstream.ts, the service users copy: a real gateway (its signing key ours, from
 * AUTHGATE_IDENTITY_KEY_FILE) forwards to it over loopback, and it fetches the gateway's JWKS
 * from the ops port over HTTP, as in development.
 */

const ISSUER = 'authgate';
const gatewayKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
/** Published in the JWKS beside the signing key (AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES): EdDSA is accepted too. */
const publishedEdKey = generateKeyPairSync('ed25519').privateKey;
const foreignKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

const dir = await mkdtemp(join(tmpdir(), 'authgate-example-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const keyFile = join(dir, 'identity.pem');
const edFile = join(dir, 'next.pem');
await writeFile(keyFile, gatewayKey.export({ type: 'pkcs8', format: 'pem' }));
await writeFile(edFile, publishedEdKey.export({ type: 'pkcs8', format: 'pem' }));

// The example needs the JWKS URL before the gateway (which needs the example's URL) exists.
const opsPort = await freePort();
const example = await startExampleUpstream({ jwksUrl: `http://127.0.0.1:${opsPort}/.well-known/jwks.json`, issuer: ISSUER });
t.teardown(() => example.close());
const gateway = await buildGateway(
  testConfig({ AUTHGATE_UPSTREAM_URL: example.url, AUTHGATE_IDENTITY_KEY_FILE: keyFile, AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES: edFile }),
  { logDestination: captureLogs().destination },
);
await gateway.opsServer.listen({ host: '127.0.0.1', port: opsPort });
await gateway.publicServer.listen({ host: '127.0.0.1', port: 0 });
t.teardown(() => gateway.close());
const publicUrl = `http://127.0.0.1:${(gateway.publicServer.server.address() as { port: number }).port}`;
const opsUrl = `http://127.0.0.1:${opsPort}`;

/** An assertion signed by `key`, with the gateway's claims for org_forged unless `claims` says otherwise. */
async function assertion(key: KeyObject, claims: { iss?: string; aud?: string; sub?: string; iat?: number; exp?: number } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const alg = key.asymmetricKeyType === 'ed25519' ? 'EdDSA' : 'ES256';
  const kid = await calculateJwkThumbprint(await exportJWK(key));
  return new SignJWT({ name: 'Forged Org', email: 'forged@example.test', environment: 'sandbox', kind: 'jwt', scope: 'accounts:read organization:read' })
    .setProtectedHeader({ alg, kid, typ: 'JWT' })
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? example.url)
    .setSubject(claims.sub ?? 'org_forged')
    .setIssuedAt(claims.iat ?? now)
    .setExpirationTime(claims.exp ?? now + 60)
    .setJti('jti-test')
    .sign(key);
}

const direct = (path: string, token?: string) => send(`${example.url}${path}`, token === undefined ? {} : { headers: { 'x-authgate-identity': token } });

/** An organization signed up through the gateway: its login token and an API key. */
async function signUp(name: string, email: string) {
  const password = 'long-enough-password';
  const org = await send(`${opsUrl}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, email, password }),
  });
  if (org.status !== 201) throw new Error(`create organization: ${org.status} ${org.body}`);
  const login = await send(`${publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${login.body}`);
  const token = login.json().token as string;
  const key = await send(`${publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${key.body}`);
  return { id: org.json().id as string, token, apiKey: key.json().apiKey as string };
}

t.test('the walk-through: the real organization, with an API key and with a login token', async (t) => {
  const email = `owner-${process.pid}@acme.test`;
  const org = await signUp('Acme', email);
  for (const [kind, credential] of [['api key', org.apiKey], ['login token', org.token]] as const) {
    const auth = { ...UA, authorization: `Bearer ${credential}` };
    const me = await send(`${publicUrl}/organization/me`, { headers: auth });
    t.equal(me.status, 200, kind);
    t.same(me.json(), { id: org.id, name: 'Acme', email }, `${kind}: the organization's own id, name and e-mail`);
    for (const path of ['/accounts', '/accounts/1?x=y']) {
      const accounts = await send(`${publicUrl}${path}`, { headers: auth });
      t.equal(accounts.status, 200, `${kind} ${path}`);
      t.same(accounts.json(), { accounts: [{ id: 'acc_example_1', organizationId: org.id, currency: 'EUR' }] });
    }
  }
  t.equal((await send(`${publicUrl}/organization/me`, { headers: { ...UA, authorization: 'Bearer agk_test_nope' } })).status, 401, 'the gateway refuses a bad credential');
});

t.test('a client-sent assertion is replaced by the gateway’s', async (t) => {
  const org = await signUp('Real Org', `real-${process.pid}@example.test`);
  // Signed with the gateway's own key (the worst case: a leaked one): valid on its own…
  const forged = await assertion(gatewayKey, { sub: 'org_forged' });
  t.same((await direct('/organization/me', forged)).json(), { id: 'org_forged', name: 'Forged Org', email: 'forged@example.test' }, 'the forgery verifies on its own');
  // …but the gateway drops it, with any client x-organization-id, and sends its own.
  const me = await send(`${publicUrl}/organization/me`, {
    headers: { ...UA, authorization: `Bearer ${org.apiKey}`, 'x-authgate-identity': [forged, forged], 'x-organization-id': 'org_forged' },
  });
  t.equal(me.status, 200);
  t.same(me.json(), { id: org.id, name: 'Real Org', email: `real-${process.pid}@example.test` });
});

t.test('straight to the example: nothing but a valid assertion from this gateway', async (t) => {
  const now = Math.floor(Date.now() / 1000);
  t.same((await direct('/accounts', await assertion(gatewayKey))).json().accounts[0].organizationId, 'org_forged', 'a valid one (the control)');
  t.equal((await direct('/organization/me', await assertion(publishedEdKey))).status, 200, 'EdDSA, with a key the JWKS publishes');
  t.equal((await direct('/accountsx', await assertion(gatewayKey))).status, 404);

  const refused: Array<[string, string | undefined]> = [
    ['no assertion', undefined],
    ['not a JWT', 'not-a-jwt'],
    ['a foreign key', await assertion(foreignKey)],
    ['the wrong audience', await assertion(gatewayKey, { aud: 'http://127.0.0.1:1' })],
    ['the wrong issuer', await assertion(gatewayKey, { iss: 'someone-else' })],
    ['expired', await assertion(gatewayKey, { iat: now - 120, exp: now - 60 })],
    ['unsigned (alg none)', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${(await assertion(gatewayKey)).split('.')[1]}.`],
  ];
  const valid = await assertion(gatewayKey);
  const [head, body, signature] = valid.split('.');
  const tamperedBody = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), sub: 'org_other' })).toString('base64url');
  refused.push(['tampered claims', `${head}.${tamperedBody}.${signature}`]);
  for (const [what, token] of refused) {
    for (const path of ['/organization/me', '/accounts']) {
      const res = await direct(path, token);
      t.equal(res.status, 401, `${what}: ${path}`);
      t.match(res.json(), { error: String }, what);
      if (token !== undefined) t.notOk(res.body.includes(token), `${what}: the assertion is not echoed`);
    }
  }
});

t.test('its refusals say what it is: authgate\'s bundled example upstream, and how to point routes at your service', async (t) => {
  const notFound = await direct('/api/v2/orders', await assertion(gatewayKey));
  t.equal(notFound.status, 404);
  t.match(notFound.json(), { error: 'not found', upstream: EXAMPLE_UPSTREAM, detail: /bundled example upstream.*not from authgate and not from your service.*set AUTHGATE_UPSTREAM_URL/ });
  t.match(notFound.json().detail, /only \/accounts and \/organization\/me/);
  const unauthorized = await direct('/api/v2/orders');
  t.equal(unauthorized.status, 401);
  t.match(unauthorized.json(), { error: 'missing or invalid identity assertion', upstream: EXAMPLE_UPSTREAM, detail: /x-authgate-identity.*bundled example upstream.*set AUTHGATE_UPSTREAM_URL/ });
});

t.test('a routes file without AUTHGATE_UPSTREAM_URL in development: a warning at start naming it, and the example says what it is', async (t) => {
  const routes = join(dir, 'orders.yaml');
  await writeFile(routes, [
    'version: 1',
    'scopes:',
    '  orders:read: Read orders',
    'routes:',
    '  - { id: orders, path: /api/v2/orders, match: subtree, methods: { GET: orders:read } }',
    '  - { id: status, path: /status, match: exact, credentials: none, methods: { GET: public } }',
    '',
  ].join('\n'));
  const gw = await startGatewayProcess({ AUTHGATE_ROUTES_FILE: routes });
  t.teardown(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  const warning = gw.output().split('\n').find((line) => line.includes('"event":"routes_to_example_upstream"'));
  t.ok(warning, 'the start warns');
  t.match(warning, /"level":40/, 'as a warning');
  t.match(warning, /AUTHGATE_UPSTREAM_URL is not set.*bundled example upstream.*set AUTHGATE_UPSTREAM_URL/, 'naming the setting, and what to do');

  // Through the gateway, as the operator tried it: the answers say who answered.
  const org = await send(`${gw.opsUrl}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Orders Inc', email: `orders-${process.pid}@example.test`, password: 'long-enough-password' }),
  });
  t.equal(org.status, 201);
  const login = await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email: `orders-${process.pid}@example.test`, password: 'long-enough-password' }) });
  const orders = await send(`${gw.publicUrl}/api/v2/orders`, { headers: { ...UA, authorization: `Bearer ${login.json().token as string}` } });
  t.equal(orders.status, 404, 'the example has no /api/v2/orders');
  t.match(orders.json(), { upstream: EXAMPLE_UPSTREAM, detail: /set AUTHGATE_UPSTREAM_URL/ });
  const status = await send(`${gw.publicUrl}/status`, { headers: UA });
  t.equal(status.status, 401, 'a public route carries no assertion');
  t.match(status.json(), { upstream: EXAMPLE_UPSTREAM, detail: /bundled example upstream/ });
});

t.test('the warning is given only when the routes file\'s default upstream has no url of its own', async (t) => {
  const warned = async (env: Record<string, string>, file?: string) => {
    const env2 = { ...env };
    if (file !== undefined) {
      const path = join(dir, `routes-${Object.keys(env).length}-${file.length}.yaml`);
      await writeFile(path, file);
      env2['AUTHGATE_ROUTES_FILE'] = path;
    }
    const config = testConfig(env2);
    return startWarnings(config, {}).some((warning) => warning.event === 'routes_to_example_upstream');
  };
  const route = (upstream?: string) => `routes:\n  - { id: a, path: /a, match: exact, methods: { GET: a:read }${upstream === undefined ? '' : `, upstream: ${upstream}`} }\n`;
  const scopes = 'version: 1\nscopes:\n  a:read: A\n';
  t.ok(await warned({}, `${scopes}${route()}`), 'a file, no AUTHGATE_UPSTREAM_URL');
  t.notOk(await warned({ AUTHGATE_UPSTREAM_URL: 'http://127.0.0.1:9' }, `${scopes}${route()}`), 'AUTHGATE_UPSTREAM_URL set');
  t.notOk(await warned({}, `${scopes}upstreams:\n  default: { url: "http://orders.internal:8080" }\n${route()}`), 'the file gives default its url');
  t.notOk(await warned({}, `${scopes}upstreams:\n  orders: { url: "http://orders.internal:8080" }\n${route('orders')}`), 'no route on the default upstream');
  t.notOk(await warned({}), 'no routes file: the built-in table is the example\'s');
});
