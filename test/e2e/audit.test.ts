import t from 'tap';
import { injectGateway, assertProblem, type InjectedGateway } from '../helpers/inject.js';
import { redisCommand, startRedis } from '../helpers/redis.js';

/**
 * The audit trail: security events recorded off the request path into the store's log, read by
 * the organization (GET /auth/audit) and the operator (GET /admin/audit); never a secret in it.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
type Page = { events: Array<{ id: string; type: string; at: string; orgId: string | null; actor: string; credential: { kind: string; id: string } | null; network: string | null; actorDetail?: { type: string; email?: string }; details: Record<string, unknown> }>; nextCursor: string | null };

/** Runs what the organization does in a day, on gw; returns what must never appear in the trail. */
async function aDayOfWork(gw: InjectedGateway) {
  const org = await gw.createOrganization({ email: `audit-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test` });
  const wrong = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: org.email, password: 'not-the-password-at-all' } });
  t.equal(wrong.statusCode, 401);
  const token = await gw.login(org.email, org.password);
  const made = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { name: 'ci', scopes: ['accounts:read', 'keys:write'] } })).json<{ id: string; apiKey: string }>();
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/api-key/${made.id}`, headers: bearer(made.apiKey), payload: { scopes: ['accounts:read'] } })).statusCode, 200);
  const rolled = (await gw.pub({ method: 'POST', url: `/auth/api-key/${made.id}/roll`, headers: bearer(token), payload: { graceSeconds: 0 } })).json<{ id: string; apiKey: string }>();
  t.equal((await gw.pub({ method: 'POST', url: '/auth/api-key/leaked', payload: { keys: [rolled.apiKey] } })).statusCode, 202);
  const spare = await gw.createApiKey(token);
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${spare.id}`, headers: bearer(token) })).statusCode, 204);
  t.equal((await gw.pub({ method: 'POST', url: '/auth/logout', headers: bearer(token) })).statusCode, 204);
  const again = await gw.login(org.email, org.password);
  await gw.gateway.audit.flush();
  return { org, token: again, secrets: [org.password, 'not-the-password-at-all', token, again, made.apiKey, rolled.apiKey, spare.apiKey, org.email] };
}

t.test("the organization reads its own trail, newest first, paged and filtered; the operator reads everyone's; nothing secret in it", async (t) => {
  const gw = await injectGateway(t);
  const { org, token, secrets } = await aDayOfWork(gw);
  const other = await aDayOfWork(gw);

  const page = (await gw.pub({ url: '/auth/audit', headers: bearer(token) })).json<Page>();
  t.same(page.events.map((e) => e.type), [
    'login.succeeded', 'logout', 'api_key.deleted', 'api_key.created', 'api_key.leaked', 'api_key.rolled', 'api_key.changed', 'api_key.created', 'login.succeeded', 'login.failed', 'organization.created',
  ], 'its own events, newest first');
  t.equal(page.nextCursor, null);
  t.ok(page.events.every((e) => e.orgId === org.id), 'only its own');
  t.match(page.events.find((e) => e.type === 'api_key.changed'), { actor: 'organization', credential: { kind: 'api_key', id: /^key_/ }, network: '127.0.0.0/24', details: { changed: ['scopes'], scopes: ['accounts:read'] } });
  t.match(page.events.find((e) => e.type === 'organization.created'), { actor: 'admin', credential: null });
  t.match(page.events.find((e) => e.type === 'api_key.leaked'), { actor: 'anonymous', credential: null });
  // The e-mail of the member who acted is named in `actorDetail` (issue 50: who did it); nowhere else.
  const text = JSON.stringify(page.events.map(({ actorDetail, ...rest }) => (actorDetail === undefined ? rest : { ...rest, actorDetail: { ...actorDetail, email: undefined } })));
  for (const secret of secrets) t.notOk(text.includes(secret), 'no password, token, key or e-mail in it');
  t.ok(page.events.filter((e) => e.actorDetail?.email !== undefined).every((e) => e.actorDetail?.email === org.email), "the only e-mail is the acting member's");

  const first = (await gw.pub({ url: '/auth/audit?limit=4', headers: bearer(token) })).json<Page>();
  const second = (await gw.pub({ url: `/auth/audit?limit=4&cursor=${first.nextCursor!}`, headers: bearer(token) })).json<Page>();
  const third = (await gw.pub({ url: `/auth/audit?limit=4&cursor=${second.nextCursor!}`, headers: bearer(token) })).json<Page>();
  t.same([...first.events, ...second.events, ...third.events].map((e) => e.id), page.events.map((e) => e.id), 'pages: each event once, in order');
  t.same((await gw.pub({ url: '/auth/audit?type=api_key.created', headers: bearer(token) })).json<Page>().events.length, 2, 'by type');
  for (const query of ['limit=0', 'limit=501', 'cursor=abc', 'type=DROP TABLE', 'org=x']) {
    assertProblem(t, await gw.pub({ url: `/auth/audit?${query}`, headers: bearer(token) }), 400, 1200, query);
  }
  const key = await gw.createApiKey(token);
  assertProblem(t, await gw.pub({ url: '/auth/audit', headers: bearer(key.apiKey) }), 403, 1103, 'a login token only');

  // The operator: everyone's, and by organization; a failed login of an unknown e-mail as a digest.
  t.equal((await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: 'nobody@example.test', password: 'whatever-password-1' } })).statusCode, 401);
  await gw.gateway.audit.flush();
  const all = (await gw.ops({ url: '/admin/audit?limit=500' })).json<Page>();
  t.ok(all.events.some((e) => e.orgId === other.org.id) && all.events.some((e) => e.orgId === org.id), 'every organization');
  const unknown = all.events.find((e) => e.type === 'login.failed' && e.orgId === null);
  t.match(unknown, { actor: 'anonymous', details: { reason: 'bad_password', emailDigest: /^[A-Za-z0-9_-]{16}$/ } });
  t.notOk(JSON.stringify(all).includes('nobody@example.test'), 'the e-mail only as a digest');
  const byOrg = (await gw.ops({ url: `/admin/audit?org=${other.org.id}&type=login.succeeded` })).json<Page>();
  t.same(byOrg.events.map((e) => [e.orgId, e.type]), [[other.org.id, 'login.succeeded'], [other.org.id, 'login.succeeded']]);
  assertProblem(t, await gw.ops({ url: '/admin/audit', headers: { authorization: 'Bearer wrong-token-0123456789' } }), 401, 1107);
});

t.test('two replicas write one trail in Redis; a write the store refuses is counted, and the request still succeeds', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  // A user who may do everything but append to streams: the audit write fails, nothing else does.
  const password = 'no-xadd-password-0123456';
  await redisCommand(redis.port, 'ACL', 'SETUSER', 'noaudit', 'on', `>${password}`, '~*', '+@all', '-xadd', 'allchannels');
  const a = await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url } });
  const b = await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url } });
  const c = await injectGateway(t, { env: { AUTHGATE_REDIS_URL: `redis://noaudit:${password}@127.0.0.1:${redis.port}` } });
  const org = await a.createOrganization();
  const token = await b.login(org.email, org.password);
  await a.gateway.audit.flush();
  await b.gateway.audit.flush();
  const read = await a.pub({ url: '/auth/audit', headers: bearer(token) });
  t.same(read.json<Page>().events.map((e) => e.type), ['login.succeeded', 'organization.created'], "A reads what B wrote");

  const key = await c.createApiKey(token);
  t.match(key.id, /^key_/, 'the request succeeds without its audit write');
  await c.gateway.audit.flush();
  const metrics = await c.gateway.metrics.registry.getSingleMetricAsString('authgate_audit_write_failures_total');
  t.match(metrics, /authgate_audit_write_failures_total\{environment="sandbox"\} 1\b/, 'the lost write is counted');
  t.ok(c.logs.records().some((line) => line.event === 'audit_write_failed'), 'and logged');
  t.notOk((await a.pub({ url: '/auth/audit', headers: bearer(token) })).json<Page>().events.some((e) => e.type === 'api_key.created'), 'it is not in the trail');
});
