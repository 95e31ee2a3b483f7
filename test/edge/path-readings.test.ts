/**
 * Issue 45 on the authorization port: a real nginx configured by the shipped snippet
 * (deploy/edge/nginx.conf) in front of a real upstream, asking a real gateway's authz listener,
 * with a public `/` subtree around credentialed routes. nginx forwards the path as the client sent
 * it (and tells authgate so in X-Original-URI); a path some server reads as a credentialed route's
 * must not be allowed as the public root's. Raw bytes on a socket to nginx; what reached the
 * upstream is the proof. Then Envoy's gRPC check (the same decider) on the same paths.
 */
import t, { type Test } from 'tap';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { listenExtAuthzGrpc } from '../../src/edge-authz/grpc/listen.js';
import { authorizationService } from '../../src/edge-authz/grpc/server.js';
import { listenAuthz } from '../helpers/authz.js';
import { renderNginxSnippet } from '../helpers/edge-snippets.js';
import { send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { findNginx, startNginx } from '../helpers/nginx-process.js';
import { PUBLIC_ROOT_ROUTES, rawGet, REFUSED_PATHS, STRONG_SPELLINGS } from '../helpers/path-readings.js';
import { freePort } from '../helpers/redis.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

async function gatewayWithKeys(t: Test) {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' }, upstream, deps: { routes: tableOf(PUBLIC_ROOT_ROUTES, upstream.url) } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const full = (await gw.createApiKey(token)).apiKey;
  const limited = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['accounts:read'] }),
  });
  return { gw, upstream, full, accountsOnly: limited.json().apiKey as string };
}

const nginx = findNginx();
t.test('nginx (the shipped snippet) in front of the authz port: the public root decides none of them', { skip: nginx === undefined ? 'no nginx with auth_request on this machine' : false }, async (t) => {
  const { gw, upstream, full, accountsOnly } = await gatewayWithKeys(t);
  const authz = await listenAuthz(gw);
  const listenPort = await freePort();
  const proxy = await startNginx(nginx!, listenPort, renderNginxSnippet({ listenPort, authzPort: authz.port, appPort: upstream.port, publicPort: Number(new URL(gw.publicUrl).port) }));
  t.teardown(() => proxy.close());
  t.afterEach(async (t) => {
    if (!t.passing()) t.comment(proxy.errorLog().slice(-4000));
  });

  t.equal((await rawGet(proxy.port, '/about')).status, 200, 'a public path is allowed and forwarded');
  t.same(upstream.requests.map((r) => r.url), ['/about']);
  upstream.requests.length = 0;

  for (const target of REFUSED_PATHS) {
    for (const [who, credential] of [['no credential', undefined], ['a key with every scope', full], ['a key with accounts:read only', accountsOnly]] as const) {
      const res = await rawGet(proxy.port, target, credential === undefined ? [] : [['Authorization', `Bearer ${credential}`]]);
      t.equal(res.status, 400, `${who}: ${target} is refused`);
    }
  }
  t.same(upstream.requests.map((r) => r.url), [], 'the upstream saw none of the refused paths');

  for (const target of STRONG_SPELLINGS) {
    upstream.requests.length = 0;
    t.equal((await rawGet(proxy.port, target)).status, 401, `${target} without a credential: the route it spells asks for one`);
    t.equal((await rawGet(proxy.port, target, [['Authorization', `Bearer ${accountsOnly}`]])).status, 403, `${target} with accounts:read only: that route's scope`);
    t.same(upstream.requests.map((r) => r.url), [], `${target}: nothing forwarded unauthorized`);
    t.equal((await rawGet(proxy.port, target, [['Authorization', `Bearer ${full}`]])).status, 200, `${target} with the route's scope`);
    t.same(upstream.requests.map((r) => r.url), [target], `${target}: forwarded as sent`);
    t.ok(upstream.requests[0]?.headers['x-organization-id'], `${target}: with the organization's identity`);
  }
});

type CheckAnswer = { ok_response?: object; denied_response?: { status?: { code?: number | string } } };
/** proto-loader decodes envoy.type.v3.StatusCode by name. */
const STATUS: Record<string, number> = { BadRequest: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404 };

async function grpcCheck(t: Test, gw: StartedGateway): Promise<(path: string, credential?: string) => Promise<number>> {
  const server = await listenExtAuthzGrpc(gw.gateway.edge, { authz: { port: undefined, host: '127.0.0.1', trustedProxies: [], cacheSeconds: 0 }, authzGrpc: { port: 0, removeCredential: true } }, gw.gateway.logger);
  if (server === undefined) throw new Error('no gRPC listener');
  t.teardown(() => server.close());
  const client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  t.teardown(() => client.close());
  const check = authorizationService()['Check']!;
  return (path, credential) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ':authority': 'api.example.com', ':method': 'GET', ':path': path, ...UA, ...(credential && { authorization: `Bearer ${credential}` }) };
      const request = { attributes: { source: { address: { socket_address: { address: '203.0.113.7', port_value: 41000 } } }, request: { http: { id: 'req-1', method: 'GET', path, host: 'api.example.com', scheme: 'https', headers } } } };
      client.makeUnaryRequest<Buffer, CheckAnswer>(check.path, (value) => value, (bytes) => check.responseDeserialize(bytes) as CheckAnswer, check.requestSerialize(request), new Metadata(), { deadline: Date.now() + 10_000 }, (error, answer) => {
        if (error || answer === undefined) return reject(error ?? new Error('no answer'));
        const code = answer.denied_response?.status?.code;
        resolve(answer.ok_response !== undefined && answer.denied_response === undefined ? 200 : typeof code === 'number' ? code : (STATUS[String(code)] ?? 0));
      });
    });
}

t.test("Envoy's gRPC check on the same paths: the same reading", async (t) => {
  const { gw, full, accountsOnly } = await gatewayWithKeys(t);
  const decide = await grpcCheck(t, gw);
  t.equal(await decide('/about'), 200, 'a public path is allowed');
  for (const path of REFUSED_PATHS) {
    t.equal(await decide(path), 400, `${path}: refused`);
    t.equal(await decide(path, full), 400, `${path} with a key: refused`);
  }
  t.equal(await decide('/accounts/..;/organization/me', accountsOnly), 400, 'accounts:read cannot reach /organization/me through ..;');
  for (const path of STRONG_SPELLINGS) {
    t.equal(await decide(path), 401, `${path}: the route it spells asks for a credential`);
    t.equal(await decide(path, accountsOnly), 403, `${path}: and its scope`);
    t.equal(await decide(path, full), 200, `${path}: allowed with it`);
  }
});
