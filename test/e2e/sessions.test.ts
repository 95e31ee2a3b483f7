import t from 'tap';
import { assertProblem, injectGateway, untilStatus, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Login sessions an organization can see and end (GET/DELETE /auth/sessions, logout everywhere,
 * the admin API), on two replicas sharing one real Redis: a session ended on one replica is
 * refused at once on the other, which had its token cached.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
type Listed = { sessions: Array<{ id: string; createdAt: string | null; expiresAt: string; client: string | null; current: boolean }> };


t.test('sessions across two replicas: listed with their client, ended one at a time or all at once; API keys stay', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  const a = await injectGateway(t, { env });
  const b = await injectGateway(t, { env });
  for (let i = 0; i < 400 && !(a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed); i++) await new Promise((resolve) => setTimeout(resolve, 25));

  const org = await a.createOrganization();
  const other = await b.signedUp();
  const login = async (gw: InjectedGateway, userAgent: string) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/login', headers: { 'user-agent': userAgent }, payload: { email: org.email, password: org.password } });
    t.equal(res.statusCode, 200);
    return res.json<{ token: string }>().token;
  };
  const phone = await login(a, 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1');
  const laptop = await login(b, 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0');
  const script = await login(a, 'curl/8.5.0');
  const key = await a.createApiKey(laptop);
  for (const token of [phone, laptop, script]) for (const gw of [a, b]) t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).statusCode, 200, 'each token works, and is cached, on each replica');

  const listed = (await b.pub({ url: '/auth/sessions', headers: bearer(laptop) })).json<Listed>();
  t.equal(listed.sessions.length, 3, 'three live sessions');
  t.same(listed.sessions.map((s) => s.client), ['curl from 127.0.0.0/24', 'Firefox from 127.0.0.0/24', 'Safari from 127.0.0.0/24'], 'the latest login first, each described coarsely');
  t.same(listed.sessions.map((s) => s.current), [false, true, false], 'the caller sees which one is its own');
  for (const session of listed.sessions) {
    t.match(session, { id: /^ses_[A-Za-z0-9_-]{22}$/, createdAt: /^\d{4}-/, expiresAt: /^\d{4}-/ });
    t.ok(Date.parse(session.expiresAt) > Date.parse(session.createdAt!));
  }
  const text = JSON.stringify(listed);
  for (const token of [phone, laptop, script]) t.notOk(text.includes(token), 'no token in the listing');
  t.same((await a.pub({ url: '/auth/sessions', headers: bearer(key.apiKey) })).json<Listed>().sessions.map((s) => s.current), [false, false, false], 'an API key with keys:read lists them; none is its own');
  t.same((await a.pub({ url: '/auth/sessions', headers: bearer(other.token) })).json<Listed>().sessions.length, 1, 'another organization sees only its own');

  // End the phone's session from the laptop, on A; B, which had the phone's token cached, refuses it.
  const phoneSession = listed.sessions[2]!.id;
  assertProblem(t, await a.pub({ method: 'DELETE', url: `/auth/sessions/${phoneSession}`, headers: bearer(other.token) }), 404, 1304, "another organization's session");
  t.equal((await a.pub({ method: 'DELETE', url: `/auth/sessions/${phoneSession}`, headers: bearer(laptop) })).statusCode, 204);
  assertProblem(t, await untilStatus(b, phone, 401), 401, 1102, "the phone's token, on the other replica");
  assertProblem(t, await a.pub({ method: 'DELETE', url: `/auth/sessions/${phoneSession}`, headers: bearer(laptop) }), 404, 1304, 'only once');
  assertProblem(t, await a.pub({ method: 'DELETE', url: '/auth/sessions/x.y', headers: bearer(laptop) }), 404, 1304, 'an id no session has');
  t.equal((await b.pub({ url: '/auth/api-key', headers: bearer(script) })).statusCode, 200, 'the others go on');

  // Log out everywhere, from B: every token of the organization is refused on A; the API key and the other organization go on.
  t.equal((await b.pub({ method: 'POST', url: '/auth/logout', headers: bearer(script), payload: { everywhere: true } })).statusCode, 204);
  for (const token of [laptop, script]) assertProblem(t, await untilStatus(a, token, 401), 401, 1102, 'every session ended, the caller\'s too');
  t.equal((await a.pub({ url: '/auth/api-key', headers: bearer(key.apiKey) })).statusCode, 200, 'API keys are not sessions');
  t.same((await a.pub({ url: '/auth/sessions', headers: bearer(key.apiKey) })).json<Listed>().sessions, [], 'none left');
  t.equal((await a.pub({ url: '/auth/api-key', headers: bearer(other.token) })).statusCode, 200, "another organization's session stays");
  const logged = [...a.logs.records(), ...b.logs.records()].filter((line) => String(line.event).startsWith('session'));
  t.match(logged, [{ event: 'session.ended', orgId: org.id, sessionId: phoneSession }, { event: 'sessions.ended', orgId: org.id, sessions: 2, by: 'logout' }]);
});

t.test('who may see and end sessions; the admin API does it for any organization', async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const second = await gw.login(org.email, org.password);
  const keyWith = async (scopes: string[]) => (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes } })).json<{ apiKey: string }>().apiKey;
  const reader = await keyWith(['keys:read']);
  const accounts = await keyWith(['accounts:read']);
  assertProblem(t, await gw.pub({ url: '/auth/sessions', headers: bearer(accounts) }), 403, 1106, 'listing needs keys:read');
  assertProblem(t, await gw.pub({ method: 'DELETE', url: '/auth/sessions', headers: bearer(reader) }), 403, 1106, 'ending needs keys:write');
  assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/logout', headers: bearer(reader), payload: { everywhere: true } }), 403, 1103, 'logout needs a login token');
  for (const payload of [{ everywhere: 'yes' }, { everywhere: true, extra: 1 }, [true]]) {
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/logout', headers: bearer(token), payload }), 400, 1200, JSON.stringify(payload));
  }
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).statusCode, 200, 'no refused logout ended anything');

  const listed = await gw.ops({ url: `/admin/organizations/${org.id}/sessions` });
  t.equal(listed.statusCode, 200);
  const ids = listed.json<Listed>().sessions.map((s) => s.id);
  t.equal(ids.length, 2);
  assertProblem(t, await gw.ops({ url: '/admin/organizations/org_nobody/sessions' }), 404, 1302, 'unknown organization');
  t.equal((await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/sessions/${ids[0]!}` })).statusCode, 204);
  assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/sessions/${ids[0]!}` }), 404, 1304, 'ended already');
  const all = await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/sessions` });
  t.same(all.json(), { ended: 1 });
  for (const credential of [token, second]) assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: bearer(credential) }), 401, 1102, 'both ended by the admin');
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(reader) })).statusCode, 200, 'keys stay');
  t.match(gw.logs.records().filter((line) => String(line.event).startsWith('session')), [{ event: 'session.ended', by: 'admin' }, { event: 'sessions.ended', sessions: 1, by: 'admin' }]);
});
