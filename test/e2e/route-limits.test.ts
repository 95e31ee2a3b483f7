import t from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * A route's own rate limit (the routes file's `rateLimit`, limits/route-limit.ts) on two real
 * replicas sharing a real Redis, over real HTTP: per credential and route on a credentialed route,
 * per client address on a public one, on top of the credential's own; a parallel burst across both
 * replicas never admits more than the limit, every refusal is a 429 that stays in the gateway.
 */

const LIMIT = 10;
const PUBLIC_LIMIT = 5;

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts' },
  routes: [
    { id: 'limited', path: '/limited', match: 'subtree', methods: { GET: 'accounts:read' }, rateLimit: `${LIMIT}/1h` },
    { id: 'open', path: '/open', match: 'exact', credentials: 'none', methods: { GET: 'public' }, rateLimit: `${PUBLIC_LIMIT}/1h` },
    { id: 'free', path: '/free', match: 'exact', methods: { GET: 'accounts:read' } },
  ],
};

const get = (gw: StartedGateway, path: string, credential?: string): Promise<Response> =>
  send(`${gw.publicUrl}${path}`, { headers: { ...UA, ...(credential !== undefined && { authorization: `Bearer ${credential}` }) } });

t.test('per-route limits hold under a parallel burst across two replicas of one Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300' };
  const routes = tableOf(FILE, upstream.url);
  const a = await startGateway(t, { env, upstream, deps: { routes } });
  const b = await startGateway(t, { env, upstream, deps: { routes } });
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = (await a.createApiKey(token)).apiKey;
  const other = (await b.createApiKey(token)).apiKey;
  const reached = (path: string) => upstream.requests.filter((request) => request.url === path).length;

  // Four times the limit, all at once, half on each replica.
  const burst = await Promise.all(Array.from({ length: 4 * LIMIT }, (_, i) => get(i % 2 === 0 ? a : b, '/limited/x', key)));
  const admitted = burst.filter((res) => res.status === 200).length;
  t.ok(admitted <= LIMIT && admitted >= 1, `the burst admitted ${admitted}, never more than ${LIMIT}`);
  for (const res of burst.filter((r) => r.status !== 200)) {
    t.equal(res.status, 429);
    t.equal(res.json().code, 1110);
    t.match(res.json().detail, /per credential/);
    t.ok(Number(res.headers['retry-after']) > 3500, 'Retry-After: until the window ends');
  }
  // Drained one replica at a time: what either still held is spent, and then nothing more.
  for (const gw of [a, b]) for (let i = 0; i <= LIMIT && (await get(gw, '/limited/x', key)).status === 200; i++);
  t.equal(reached('/limited/x'), LIMIT, 'exactly the limit reached the upstream over both replicas');
  for (const gw of [a, b]) t.equal((await get(gw, '/limited/x', key)).status, 429, 'refused on both');

  // Per credential: another key has a window of its own on the route; the key itself is free elsewhere.
  t.equal((await get(b, '/limited/y', other)).status, 200, 'another credential on the same route');
  t.equal((await get(a, '/free', key)).status, 200, 'the limited credential on a route without a limit');

  // A public route: per client address (both replicas see 127.0.0.1).
  const open = await Promise.all(Array.from({ length: 3 * PUBLIC_LIMIT }, (_, i) => get(i % 2 === 0 ? a : b, '/open')));
  t.ok(open.filter((res) => res.status === 200).length <= PUBLIC_LIMIT, 'the public burst admitted at most the limit');
  for (const gw of [a, b]) for (let i = 0; i <= PUBLIC_LIMIT && (await get(gw, '/open')).status === 200; i++);
  t.equal(reached('/open'), PUBLIC_LIMIT, 'exactly the public limit reached the upstream');
  const refused = await get(a, '/open', key);
  t.equal(refused.status, 429, 'a credential does not buy a public route a window of its own');
  t.match(refused.json().detail, /per client address/);
});
