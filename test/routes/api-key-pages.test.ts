import t from 'tap';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * GET /auth/api-key (and the admin listing) a page at a time, newest first, and the retention of
 * expired keys: listed as expired for 30 days, then dropped by the store.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
type Page = { keys: Array<{ id: string; createdAt: string; expiresAt: string | null }>; nextCursor: string | null };

t.test('pages: newest first, `limit` per page, `nextCursor` until the last; no key twice, none skipped, keys made meanwhile not in the later pages', async (t) => {
  let now = Date.parse('2030-01-01T00:00:00.000Z');
  const gw = await injectGateway(t, { deps: { now: () => now } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const made: string[] = [];
  for (let i = 0; i < 7; i++) {
    now += i < 4 ? 1000 : 0; // the last four share one createdAt: ordered by id then
    made.push((await gw.createApiKey(token)).id);
  }
  const newestFirst = [...made.slice(3).sort().reverse(), ...made.slice(0, 3).reverse()];
  const all = (await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json<Page>();
  t.same(all.keys.map((k) => k.id), newestFirst, 'one page by default, newest first');
  t.equal(all.nextCursor, null);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=3${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const res = await gw.pub({ url: `/auth/api-key${query}`, headers: bearer(token) });
    t.equal(res.statusCode, 200, res.body);
    const page = res.json<Page>();
    t.ok(page.keys.length <= 3);
    seen.push(...page.keys.map((k) => k.id));
    cursor = page.nextCursor;
    if (++pages === 1) {
      now += 1000;
      await gw.createApiKey(token); // made after the first page: newer than everything paged so far
    }
  } while (cursor !== null && pages < 10);
  t.equal(pages, 3, '3 + 3 + 1');
  t.same(seen, newestFirst, 'every key once, in order');

  const admin = await gw.ops({ url: `/admin/organizations/${org.id}/api-keys?limit=2` });
  t.equal(admin.statusCode, 200);
  t.equal(admin.json<Page>().keys.length, 2, 'the admin listing pages alike');
  t.type(admin.json<Page>().nextCursor, 'string');

  for (const query of ['limit=0', 'limit=501', 'limit=-1', 'limit=abc', 'limit=1.5', 'cursor=', 'cursor=not-a-cursor', `cursor=${Buffer.from('{"a":1}').toString('base64url')}`, 'sort=asc']) {
    assertProblem(t, await gw.pub({ url: `/auth/api-key?${query}`, headers: bearer(token) }), 400, 1200, query);
  }
  t.equal((await gw.pub({ url: '/auth/api-key?limit=500', headers: bearer(token) })).statusCode, 200, 'the most');
});

t.test('an expired key stays listed for 30 days, then the store drops it', async (t) => {
  let now = Date.parse('2030-01-01T00:00:00.000Z');
  const gw = await injectGateway(t, { deps: { now: () => now } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const expiring = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { expiresIn: 60 } })).json<{ id: string; apiKey: string }>();
  const lasting = await gw.createApiKey(token);
  const ids = async () => (await gw.pub({ url: '/auth/api-key', headers: bearer(lasting.apiKey) })).json<Page>().keys.map((k) => k.id);

  now += 60_000 + 30 * 24 * HOURS;
  t.same((await ids()).sort(), [lasting.id, expiring.id].sort(), 'listed, as expired, for 30 days');
  t.ok(await gw.gateway.storage.store.findApiKeySummary(org.id, expiring.id), 'and stored');
  now += 1;
  t.same(await ids(), [lasting.id], 'then no longer');
  t.equal(await gw.gateway.storage.store.findApiKeySummary(org.id, expiring.id), undefined, 'the listing had the store drop it');
  assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: bearer(expiring.apiKey) }), 401, 1102, 'still refused, now as unknown');
});

const HOURS = 3_600_000;
