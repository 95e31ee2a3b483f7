import t, { type Test } from 'tap';
import { send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { rawRequest, requestText } from '../helpers/raw-http.js';

/**
 * Method-override headers on the public port (issue 45; authz/method-override.ts): an upstream
 * with method-override middleware serves `GET /accounts/7` with `X-HTTP-Method-Override: DELETE`
 * as a DELETE, so the request needs both methods' scopes before it is forwarded, on both
 * forwarding paths: the fast lane (a warm key, proxy/fast-path.ts) and fastify's (proxy/forward.ts).
 * Raw bytes on a socket, and what reached the upstream.
 */

const OVERRIDES = ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override'];

async function keyWith(gw: StartedGateway, token: string, scopes: string[]): Promise<string> {
  const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes }) });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.body}`);
  return res.json().apiKey as string;
}

/** How many requests the fast lane took, from the gateway's own metric. */
async function laneTaken(gw: StartedGateway): Promise<number> {
  const text = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_fast_lane_requests_total');
  let total = 0;
  for (const match of text.matchAll(/^authgate_fast_lane_requests_total\{[^}]*\} (\d+)$/gm)) total += Number(match[1]);
  return total;
}

async function setup(t: Test) {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const readOnly = await keyWith(gw, token, ['accounts:read']);
  const readWrite = await keyWith(gw, token, ['accounts:read', 'accounts:write']);
  const port = Number(new URL(gw.publicUrl).port);
  // Warm: each key cached and its assertion signed, so a request of it can take the fast lane.
  for (const key of [readOnly, readWrite]) t.equal((await gw.get('/accounts/warm', { authorization: `Bearer ${key}` })).status, 200);
  const raw = (key: string, headers: Array<[string, string]>, id: string) =>
    rawRequest(port, requestText('GET', '/accounts/7', [['User-Agent', 'curl/8.5.0'], ['Authorization', `Bearer ${key}`], ['X-Request-ID', id], ...headers]));
  // The framework's way: a request the lane never takes (fastify's own inject).
  const framework = (key: string, headers: Record<string, string>, id: string) =>
    gw.gateway.publicServer.inject({ method: 'GET', url: '/accounts/7', headers: { ...UA, authorization: `Bearer ${key}`, 'x-request-id': id, ...headers } });
  const reached = (id: string) => gw.upstream.requests.filter((r) => r.headers['x-request-id'] === id);
  return { gw, readOnly, readWrite, raw, framework, reached };
}

t.test('an override naming a method whose scope the key lacks: 403 on both paths, nothing reaches the upstream', async (t) => {
  const s = await setup(t);
  for (const name of OVERRIDES) {
    const lane = await s.raw(s.readOnly, [[name, 'DELETE']], `lane-${name}`);
    t.equal(lane.status, 403, `${name}: the lane's request refused`);
    t.match(lane.raw, /"code":1106/);
    t.same(s.reached(`lane-${name}`), [], `${name}: nothing reached the upstream`);
    const framework = await s.framework(s.readOnly, { [name]: 'delete' }, `fw-${name}`);
    t.equal(framework.statusCode, 403, `${name}: fastify's request refused`);
    t.same(s.reached(`fw-${name}`), [], `${name}: nothing reached the upstream`);
  }
});

t.test('an override that is not one method the route forwards: 400 / 1235 on both paths', async (t) => {
  const s = await setup(t);
  for (const value of ['TRACE', 'GET, DELETE', 'DELETE\tx']) {
    const lane = await s.raw(s.readWrite, [['X-HTTP-Method-Override', value]], `bad-${value}`);
    t.equal(lane.status, 400, `${value}: refused`);
    t.match(lane.raw, /"code":1235/);
    t.same(s.reached(`bad-${value}`), []);
  }
  const framework = await s.framework(s.readWrite, { 'x-http-method': 'TRACE' }, 'bad-fw');
  t.equal(framework.statusCode, 400);
  t.equal(framework.json().code, 1235);
});

t.test('a key holding both methods\' scopes: forwarded with its override, by the fast lane too', async (t) => {
  const s = await setup(t);
  const before = await laneTaken(s.gw);
  const lane = await s.raw(s.readWrite, [['X-HTTP-Method-Override', 'DELETE']], 'both-lane');
  t.equal(lane.status, 200);
  t.equal(await laneTaken(s.gw), before + 1, 'the fast lane took it');
  t.equal(s.reached('both-lane')[0]?.headers['x-http-method-override'], 'DELETE', 'the checked override goes on');
  const framework = await s.framework(s.readWrite, { 'x-method-override': 'POST' }, 'both-fw');
  t.equal(framework.statusCode, 200);
  t.equal(s.reached('both-fw').length, 1);
});
