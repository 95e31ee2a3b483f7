import t, { type Test } from 'tap';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { listenAuthz } from '../helpers/authz.js';
import { PLANS_FILE } from '../helpers/plans.js';
import { ADMIN_TOKEN, eventually, send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { compiledTable } from '../helpers/route-tables.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Plans (issue 47): what an organization's credentials may hold is their own scopes within its
 * plan's, on every request, on both ways of the public port (the fast lane and the framework's)
 * and on the authorization port; a key is never given a scope outside the plan (403, 1130); a
 * move to another plan holds on every replica within a second without rewriting a key; a plan
 * removed from the file falls back to defaultPlan. On the memory store and on a real Redis.
 */

const bearer = (credential: string) => ({ ...UA, authorization: `Bearer ${credential}` });
const json = (credential: string) => ({ ...bearer(credential), 'content-type': 'application/json' });
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

async function gatewayOn(t: Test, store: 'memory' | 'redis', file: RoutesFile, extra: { redisUrl?: string; upstream?: RecordingUpstream; identity?: 'on' | 'off' } = {}): Promise<StartedGateway> {
  const upstream = extra.upstream ?? (await startRecordingUpstream());
  if (extra.upstream === undefined) t.teardown(() => upstream.close());
  // With the identity assertion off, nothing but the plan check keeps a kept credential off the fast lane.
  let env: Record<string, string> = { AUTHGATE_AUTHZ_PORT: '0', AUTHGATE_IDENTITY_ASSERTION: extra.identity ?? 'on' };
  if (store === 'redis') {
    let url = extra.redisUrl;
    if (url === undefined) {
      const redis = await startRedis();
      t.teardown(() => redis.stop());
      url = redis.url;
    }
    env = { ...env, AUTHGATE_REDIS_URL: url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  }
  const gw = await startGateway(t, { env, upstream, deps: { routes: compiledTable(file, upstream.url) } });
  t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 15_000, 50), 'ready');
  return gw;
}

const movePlan = (gw: StartedGateway, orgId: string, plan: string | null) =>
  send(`${gw.opsUrl}/admin/organizations/${orgId}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ plan }) });

/** A POST /accounts (accounts:write) by the framework's way (an Origin sends it there) or the fast lane's (a cached credential). */
const write = (gw: StartedGateway, credential: string, way: 'lane' | 'framework') =>
  send(`${gw.publicUrl}/accounts`, { method: 'POST', headers: { ...bearer(credential), ...(way === 'framework' && { origin: 'http://app.example.test' }) } });

const authzWrite = (authz: { url: string }, credential: string) =>
  send(`${authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'POST', 'x-original-uri': '/accounts', authorization: `Bearer ${credential}` } });

for (const [store, identity] of [['memory', 'off'], ['redis', 'on']] as const) {
  t.test(`${store} store, identity assertion ${identity}: a key is given only its plan's scopes; a key without scopes and a login token hold the plan's; a move to another plan holds at once`, async (t) => {
    const gw = await gatewayOn(t, store, PLANS_FILE, { identity });
    const authz = await listenAuthz(gw);
    const org = await gw.createOrganization();
    const token = await gw.login(org.email, org.password);

    const outside = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: JSON.stringify({ scopes: ['accounts:read', 'accounts:write', 'organization:read'] }) });
    t.equal(outside.status, 403, 'a scope outside the plan: refused');
    t.equal(outside.json().code, 1130);
    t.match(outside.json().detail, /accounts:write, organization:read/, 'naming the scopes outside it');
    t.notMatch(outside.json().detail, /accounts:read/, 'only those');

    const scopes = (await send(`${gw.publicUrl}/auth/scopes`, { headers: bearer(token) })).json();
    t.strictSame(scopes.scopes.map((s: { name: string }) => s.name), ['accounts:read', 'keys:read', 'keys:write'], "GET /auth/scopes: the plan's (the built-in ones in every plan)");
    t.equal(scopes.plan, 'basic');

    const reader = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: JSON.stringify({ scopes: ['accounts:read'] }) });
    t.equal(reader.status, 201, 'within the plan: made');
    const every = (await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: "{}" })).json() as { id: string; apiKey: string };
    for (const way of ['framework', 'lane', 'lane'] as const) {
      const refused = await write(gw, every.apiKey, way);
      t.equal(refused.status, 403, `a key without scopes holds the plan's only (${way})`);
      t.equal(refused.json().code, 1106);
      t.match(refused.json().detail, /plan \(basic\)/);
      t.equal((await write(gw, token, way)).status, 403, `a login token too (${way})`);
    }
    t.equal((await authzWrite(authz, every.apiKey)).status, 403, 'and on the authorization port');
    const read = await gw.get('/accounts', { authorization: `Bearer ${every.apiKey}` });
    t.equal(read.status, 200);
    t.equal(gw.upstream.requests.at(-1)?.headers['x-organization-scopes'], 'accounts:read keys:read keys:write', "what upstream is told: the plan's");

    const narrowed = await send(`${gw.publicUrl}/auth/api-key/${every.id}`, { method: 'PATCH', headers: json(token), body: JSON.stringify({ scopes: ['accounts:write'] }) });
    t.equal(narrowed.status, 403, 'narrowed to a scope outside the plan: refused');
    t.equal(narrowed.json().code, 1130);

    const unknown = await movePlan(gw, org.id, 'gold');
    t.equal(unknown.status, 400, 'an unknown plan');
    t.equal(unknown.json().code, 1250);
    t.match(unknown.json().detail, /basic, full/);
    t.equal((await movePlan(gw, 'org_nobody', 'full')).status, 404);

    const moved = await movePlan(gw, org.id, 'full');
    t.equal(moved.status, 200);
    t.match(moved.json(), { id: org.id, plan: 'full', effectivePlan: 'full' }, 'the answer shows the plan');
    for (const way of ['framework', 'lane', 'lane'] as const) {
      t.equal((await write(gw, every.apiKey, way)).status, 200, `upgraded: the same key may write at once (${way})`);
      t.equal((await write(gw, token, way)).status, 200, `and the login token (${way})`);
    }
    t.equal((await authzWrite(authz, every.apiKey)).status, 200, 'on the authorization port too');
    if (identity === 'off') t.match((await send(`${gw.opsUrl}/metrics`)).body, /authgate_fast_lane_requests_total\{[^}]*route="\/accounts\/\*"[^}]*\} [1-9]/, 'the lane took some');
    const made = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: JSON.stringify({ scopes: ['accounts:write'] }) });
    t.equal(made.status, 201, 'a key for accounts:write may be made now');

    const back = await movePlan(gw, org.id, null);
    t.match(back.json(), { plan: null, effectivePlan: 'basic' }, 'null: the default again');
    t.equal((await write(gw, made.json().apiKey, 'lane')).status, 403, 'downgraded: the key made for it is refused, never rewritten');
    t.equal((await authzWrite(authz, made.json().apiKey)).status, 403);

    // The trail is written off the request path: waited for, bounded.
    let changes: unknown[] = [];
    await eventually(async () => {
      const page = (await send(`${gw.opsUrl}/admin/audit?org=${org.id}&type=organization.plan_changed`, { headers: admin })).json();
      changes = (page.events as { details: unknown }[]).map((e) => e.details).reverse();
      return changes.length >= 2;
    }, 10_000, 20);
    t.strictSame(changes, [{ from: null, to: 'full' }, { from: 'full', to: null }], 'each move audited as organization.plan_changed');
  });
}

t.test('no plans in the file: every scope as before; no plan in the answers', async (t) => {
  const gw = await gatewayOn(t, 'memory', BUILTIN_ROUTES_FILE);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: JSON.stringify({ scopes: ['accounts:write'] }) });
  t.equal(key.status, 201);
  t.equal((await write(gw, key.json().apiKey, 'lane')).status, 200);
  t.equal((await write(gw, key.json().apiKey, 'lane')).status, 200);
  t.notOk('plan' in (await send(`${gw.publicUrl}/auth/scopes`, { headers: bearer(token) })).json());
  const view = (await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { headers: admin })).json();
  t.notOk('plan' in view || 'effectivePlan' in view);
  const moved = await movePlan(gw, org.id, 'full');
  t.equal(moved.status, 400, 'no plan to move to');
  t.equal(moved.json().code, 1250);
});

t.test('a plan removed from the file: its organizations fall back to defaultPlan, logged and counted; back when it returns', async (t) => {
  const gw = await gatewayOn(t, 'memory', PLANS_FILE);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  t.equal((await movePlan(gw, org.id, 'full')).status, 200);
  t.equal((await write(gw, token, 'lane')).status, 200);
  const { full: _removed, ...kept } = PLANS_FILE.plans!;
  gw.gateway.routes.swap(compiledTable({ ...PLANS_FILE, plans: kept }, gw.upstream.url));
  for (const way of ['framework', 'lane'] as const) t.equal((await write(gw, token, way)).status, 403, `on basic now (${way})`);
  t.match((await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { headers: admin })).json(), { plan: 'full', effectivePlan: 'basic' }, 'its own plan kept, the default applied');
  t.match((await send(`${gw.opsUrl}/metrics`)).body, /authgate_plan_fallbacks_total\{[^}]*plan="full"[^}]*\} [1-9]/, 'counted');
  t.equal(gw.logs.records().filter((line) => line.event === 'plan.fallback').length, 1, 'logged once for the table');
  gw.gateway.routes.swap(compiledTable(PLANS_FILE, gw.upstream.url));
  t.equal((await write(gw, token, 'lane')).status, 200, 'the plan back in the file: its own again');
});

t.test('two replicas on one Redis: a downgrade on A refuses an existing key on A and B within a second, an upgrade gives it back; both ports', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const a = await gatewayOn(t, 'redis', PLANS_FILE, { redisUrl: redis.url, upstream });
  const b = await gatewayOn(t, 'redis', PLANS_FILE, { redisUrl: redis.url, upstream, identity: 'off' });
  const [authzA, authzB] = [await listenAuthz(a), await listenAuthz(b)];
  const org = await a.createOrganization();
  t.equal((await movePlan(a, org.id, 'full')).status, 200);
  const token = await a.login(org.email, org.password);
  const key = await send(`${a.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: JSON.stringify({ scopes: ['accounts:read', 'accounts:write'] }) });
  t.equal(key.status, 201);
  const apiKey = key.json().apiKey as string;
  const statuses = async () => [
    (await write(a, apiKey, 'lane')).status,
    (await write(b, apiKey, 'lane')).status,
    (await write(b, apiKey, 'framework')).status,
    (await authzWrite(authzA, apiKey)).status,
    (await authzWrite(authzB, apiKey)).status,
  ];
  // B may not have read A's move yet when the key is first used there: the message, then the read.
  t.ok(await eventually(async () => (await statuses()).every((s) => s === 200), 10_000, 10), 'on full: allowed everywhere (and cached on both replicas)');

  t.equal((await movePlan(a, org.id, 'basic')).status, 200);
  // Bounded far below the credential cache's TTL: only the bus can explain it.
  t.ok(await eventually(async () => (await statuses()).every((s) => s === 403), 10_000, 10), 'downgraded on A: refused on both replicas and both ports');
  t.equal((await b.get('/accounts', { authorization: `Bearer ${apiKey}` })).status, 200, 'what basic allows still allowed');
  t.equal(upstream.requests.at(-1)?.headers['x-organization-scopes'], 'accounts:read', 'and upstream told the narrowed scopes (the key never held keys:*)');

  t.equal((await movePlan(b, org.id, 'full')).status, 200);
  t.ok(await eventually(async () => (await statuses()).every((s) => s === 200), 10_000, 10), 'upgraded on B: allowed again on both');
});

t.test("a plan's rateLimit is its credentials' default (an organization's own limit wins); its maxKeys bounds the keys held", async (t) => {
  const file: RoutesFile = { ...PLANS_FILE, plans: { basic: { scopes: 'all', rateLimit: '2/60s', maxKeys: 2 }, full: { scopes: 'all' } } };
  const gw = await gatewayOn(t, 'memory', file);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = (await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: '{}' })).json() as { apiKey: string };
  const reads = async (n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status);
    return statuses;
  };
  t.strictSame(await reads(3), [200, 200, 429], "basic's 2/60s");
  const view = (await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { headers: admin })).json();
  t.match(view, { rateLimit: null, effectiveRateLimit: '2/60s', effectiveKeyLimit: 2 }, "the plan's, as the admin API shows them");
  t.equal((await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ rateLimit: 'off' }) })).status, 200);
  t.strictSame(await reads(3), [200, 200, 200], "the organization's own (off) wins over its plan's");

  t.equal((await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: '{}' })).status, 201, 'a second key');
  const third = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: '{}' });
  t.equal(third.status, 409, "a third: basic's maxKeys is 2");
  t.equal(third.json().code, 1305);
  t.equal((await movePlan(gw, org.id, 'full')).status, 200);
  t.equal((await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: json(token), body: '{}' })).status, 201, 'on full: AUTHGATE_MAX_KEYS_PER_ORGANIZATION again');
});

t.test('a move to another plan is sent as a security notice', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, {
    env: { AUTHGATE_NOTIFY_WEBHOOK_URL: receiver.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'plans-test-secret-0123456789abcdef-XyZ' },
    upstream,
    deps: { routes: compiledTable(PLANS_FILE, upstream.url) },
  });
  const org = await gw.createOrganization();
  t.equal((await movePlan(gw, org.id, 'full')).status, 200);
  const plan = () => receiver.received.map((n) => JSON.parse(n.raw.toString('utf8')) as { type: string; organization: { id: string }; details: unknown }).find((n) => n.type === 'organization.plan_changed');
  t.ok(await eventually(async () => plan() !== undefined, 10_000, 20), 'noticed');
  t.match(plan(), { organization: { id: org.id }, details: { from: null, to: 'full' } });
});
