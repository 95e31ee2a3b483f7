import t, { type Test } from 'tap';
import { injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Issue 26, the attack as it was sent: organization X renames its key 1,120 times (every answer
 * 200); organization V's trail must stay whole, in V's own GET /auth/audit and in the admin's
 * GET /admin/audit, with the retention at its smallest (1,000 events) and on both stores.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
type Page = { events: Array<{ id: string; type: string; orgId: string | null }>; nextCursor: string | null };

async function attack(t: Test, gw: InjectedGateway) {
  const victim = await gw.signedUp();
  const x = await gw.signedUp();
  await gw.gateway.audit.flush();
  const before = (await gw.pub({ url: '/auth/audit', headers: bearer(victim.token) })).json<Page>().events.map((e) => e.type);
  t.same(before, ['api_key.created', 'login.succeeded', 'organization.created'], "V's trail before");

  // One after another (parallel renames of one key are another point of the issue: contention).
  let renamed = 0;
  for (let i = 0; i < 1120; i++) {
    const res = await gw.pub({ method: 'PATCH', url: `/auth/api-key/${x.keyId}`, headers: bearer(x.token), payload: { name: `rename ${i}` } });
    if (res.statusCode === 200) renamed++;
  }
  t.equal(renamed, 1120, 'every rename: 200');
  await gw.gateway.audit.flush();

  const own = (await gw.pub({ url: '/auth/audit', headers: bearer(victim.token) })).json<Page>();
  t.same(own.events.map((e) => e.type), before, "V's own view: whole");
  const byOrg = (await gw.ops({ url: `/admin/audit?org=${victim.orgId}` })).json<Page>();
  t.same(byOrg.events.map((e) => e.type), before, "the admin's view of V: whole");
  // The admin-wide view, page by page: V's events are there, X's trail is at its bound.
  const seen: Page['events'] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const read: Page = (await gw.ops({ url: `/admin/audit?limit=500${cursor === null ? '' : `&cursor=${cursor}`}` })).json<Page>();
    seen.push(...read.events);
    cursor = read.nextCursor;
    if (cursor === null) break;
  }
  t.same(seen.filter((e) => e.orgId === victim.orgId).map((e) => e.type), before, "the admin-wide view has V's events");
  t.equal(seen.filter((e) => e.orgId === x.orgId).length, 1000, "X's trail is bounded by its own retention");
  t.equal(new Set(seen.map((e) => e.id)).size, seen.length, 'each event once');
}

t.test('one organization floods its trail: the other keeps its own (memory store)', async (t) => {
  await attack(t, await injectGateway(t, { env: { AUTHGATE_AUDIT_MAX_EVENTS: '1000' } }));
});

t.test('one organization floods its trail: the other keeps its own (Redis)', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  await attack(t, await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_AUDIT_MAX_EVENTS: '1000' } }));
});
