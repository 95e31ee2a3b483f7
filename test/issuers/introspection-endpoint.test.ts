// The introspection call as it goes over the wire, and every way an endpoint can fail to answer
// (issue 49, RFC 7662), against a real HTTP server on loopback that answers what each case needs
// (the happy path, inactive and revoked are test/issuers/introspection.test.ts's, against
// oidc-provider): the request's form and client_secret_basic encoding; an `active: true` answer
// held to the issuer's claims rules; refused connections, 5xx, a hang past timeoutSeconds, a body
// that is no answer or too large: 503 (1541) with Retry-After, never a 200 or a 401.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { ADMIN_TOKEN, send, startGateway, UA } from '../helpers/gateway.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const API = 'https://api.example.test';
/** Characters client_secret_basic form-encodes (RFC 6749 §2.3.1) before base64. */
const SECRET = 'a+b/c=d e%f';

type Seen = { headers: IncomingMessage['headers']; body: string };

t.test('the introspection endpoint: the request on the wire, the answer checked, and fail closed when it cannot answer', async (t) => {
  let answer: (res: ServerResponse) => void = (res) => res.writeHead(500).end();
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientSecretFile = join(mkdtempSync(join(tmpdir(), 'authgate-introspection-endpoint-')), 'secret');
  writeFileSync(clientSecretFile, `${SECRET}\n`);
  const file: RoutesFile = {
    version: 1,
    scopes: { 'orders:read': 'Read orders' },
    issuers: { corp: { issuer: endpoint, audiences: [API], organization: { claim: 'org_id' }, clockSkewSeconds: 0, introspection: { url: `${endpoint}/introspect?v=1`, clientId: 'authgate gw', clientSecretFile, timeoutSeconds: 1 } } },
    routes: [{ id: 'orders', path: '/orders', match: 'subtree', credentials: ['issuer:corp'], methods: { GET: 'orders:read' } }],
  };
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { upstream, deps: { routes: tableOf(file, upstream.url) } });
  const org = await gw.createOrganization();
  const patched = await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ externalIds: { corp: 'org_wire' } }) });
  t.equal(patched.status, 200, patched.body);
  const get = (token: string) => gw.get('/orders/1', { ...UA, authorization: `Bearer ${token}` });
  const opaque = () => `op_${randomBytes(18).toString('base64url')}`;
  const json = (body: unknown) => (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({ active: true, iss: endpoint, aud: [API, 'https://other.example.test'], client_id: 'partner-app', org_id: 'org_wire', scope: 'orders:read', exp: now() + 300 });

  await t.test('the request: a form POST to the URL as given, client_secret_basic form-encoded', async (t) => {
    answer = json(claims());
    const token = opaque();
    const res = await get(token);
    t.equal(res.status, 200, res.body);
    t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], org.id);
    const call = seen.at(-1)!;
    t.equal(call.headers['content-type'], 'application/x-www-form-urlencoded');
    t.same(Object.fromEntries(new URLSearchParams(call.body)), { token, token_type_hint: 'access_token' });
    t.equal(call.headers.authorization, `Basic ${Buffer.from('authgate+gw:a%2Bb%2Fc%3Dd+e%25f').toString('base64')}`, 'RFC 6749 §2.3.1: both form-encoded, then base64');
  });

  await t.test('an active answer is held to the issuer rules, as a JWT is', async (t) => {
    const cases: [string, Record<string, unknown>, number, number][] = [
      ['another iss', { ...claims(), iss: 'https://elsewhere.example.test' }, 401, 1102],
      ['no aud', { ...claims(), aud: undefined }, 401, 1102],
      ['another aud', { ...claims(), aud: 'https://other.example.test' }, 401, 1102],
      ['expired exp', { ...claims(), exp: now() - 60 }, 401, 1102],
      ['nbf ahead', { ...claims(), nbf: now() + 600 }, 401, 1102],
      ['exp not a number', { ...claims(), exp: 'soon' }, 401, 1102],
      ['no org claim', { ...claims(), org_id: undefined }, 401, 1140],
      ['an org claim naming no organization', { ...claims(), org_id: 'org_nobody' }, 401, 1140],
      ['no iss and no exp: active decides', { ...claims(), iss: undefined, exp: undefined }, 200, 0],
      ['active false with every claim', { ...claims(), active: false }, 401, 1102],
      ['active "true" (a string)', { ...claims(), active: 'true' }, 503, 1541],
    ];
    for (const [what, body, status, code] of cases) {
      answer = json(body);
      const res = await get(opaque());
      t.equal(res.status, status, what);
      if (code !== 0) t.equal(res.json().code, code, `${what}: code`);
    }
  });

  await t.test('the endpoint cannot answer: 503 (1541) with Retry-After, each way', async (t) => {
    const cases: [string, (res: ServerResponse) => void][] = [
      ['500', (res) => res.writeHead(500).end('{"active":true}')],
      ['401 (the client misconfigured)', (res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}')],
      ['HTML', (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>busy</html>')],
      ['JSON without active', json({ sub: 'x' })],
      ['a JSON array', json([{ active: true }])],
      ['a body over 64 KiB', json({ ...claims(), padding: 'x'.repeat(70_000) })],
      ['no answer within timeoutSeconds', () => {}],
    ];
    for (const [what, respond] of cases) {
      answer = respond;
      const res = await get(opaque());
      t.equal(res.status, 503, what);
      t.equal(res.json().code, 1541, `${what}: code`);
      t.equal(res.headers['retry-after'], '1', `${what}: Retry-After`);
      t.notOk(res.body.includes(SECRET), `${what}: no secret in the body`);
    }
    const metrics = (await send(`${gw.opsUrl}/metrics`)).body;
    for (const result of ['error', 'invalid', 'timeout']) t.match(metrics, new RegExp(`authgate_issuer_introspections_total\\{issuer="corp",result="${result}"[^}]*\\} [1-9]`), `counted as ${result}`);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const refused = await get(opaque());
    t.equal(refused.status, 503, 'connection refused');
    t.equal(refused.json().code, 1541);
    t.notOk(gw.logs.text().includes(SECRET), 'the secret is in no log line');
  });
});
