import t, { type Test } from 'tap';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { bearer, team } from './helpers.js';

/**
 * Who did it (issue 50): every audit entry names its actor in `actorDetail` (a member by id and
 * e-mail, the first member too; an API key by id and the member who created it; the operator; the
 * gateway itself), and GET /auth/audit and GET /admin/audit filter by member. On both stores.
 */

type Entry = { id: string; type: string; actor: string; credential: { kind: string; id: string } | null; member?: { id: string; email: string }; actorDetail?: Record<string, unknown>; details: Record<string, unknown> };
type Page = { events: Entry[]; nextCursor: string | null };

async function actors(t: Test, gw: InjectedGateway) {
  const { org, tokens, developer } = await team(t, gw);
  const firstId = `mem_${org.id.slice(4)}`;
  // The developer's key, allowed to change keys: acting as an API key whose creator is the developer.
  const devKey = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(tokens.developer), payload: { name: 'dev', scopes: ['keys:read', 'keys:write'] } })).json<{ id: string; apiKey: string }>();
  const ownerKey = await gw.createApiKey(tokens.owner);
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/api-key/${devKey.id}`, headers: bearer(devKey.apiKey), payload: { name: 'renamed by itself' } })).statusCode, 200);
  const ownersOwnKey = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(tokens.owner), payload: { name: 'owner', scopes: ['keys:write'] } })).json<{ id: string; apiKey: string }>();
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${ownerKey.id}`, headers: bearer(ownersOwnKey.apiKey) })).statusCode, 204);
  const spare = await gw.createApiKey(tokens.owner);
  t.equal((await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/api-keys/${spare.id}` })).statusCode, 204, 'the operator deletes a key');
  const leaked = await gw.createApiKey(tokens.owner);
  t.equal((await gw.pub({ method: 'POST', url: '/auth/api-key/leaked', payload: { keys: [leaked.apiKey] } })).statusCode, 202);
  t.equal((await gw.pub({ method: 'POST', url: '/auth/logout', headers: bearer(tokens.viewer) })).statusCode, 204);
  await gw.gateway.audit.flush();

  const all = (await gw.pub({ url: '/auth/audit?limit=500', headers: bearer(tokens.owner) })).json<Page>().events;
  const find = (type: string, where: (e: Entry) => boolean = () => true) => all.find((e) => e.type === type && where(e));
  t.same(find('api_key.created', (e) => e.details.keyId === ownerKey.id)?.actorDetail, { type: 'member', id: firstId, email: org.email }, 'the first member is named, by id and e-mail');
  t.same(find('api_key.created', (e) => e.details.keyId === devKey.id)?.actorDetail, { type: 'member', id: developer.memberId, email: developer.email }, 'another member is named');
  t.same(find('api_key.changed', (e) => e.details.keyId === devKey.id)?.actorDetail, { type: 'api_key', id: devKey.id, createdBy: developer.memberId }, 'an API key is named with the member who created it');
  t.same(find('api_key.deleted', (e) => e.details.keyId === ownerKey.id)?.actorDetail, { type: 'api_key', id: ownersOwnKey.id, createdBy: firstId }, "the first member's key names the first member");
  t.same(find('api_key.deleted', (e) => e.details.keyId === spare.id)?.actorDetail, { type: 'operator' }, 'the admin API is the operator');
  t.same(find('api_key.leaked')?.actorDetail, { type: 'gateway' }, 'a key revoked on a leak report: the gateway itself');
  t.same(find('logout')?.actorDetail, { type: 'member', id: (await memberIdOf(gw, tokens.owner, 'viewer')), email: (await emailOf(gw, tokens.owner, 'viewer')) }, 'a logout names its member');
  t.same(find('login.succeeded', (e) => e.member === undefined)?.actorDetail, { type: 'member', id: firstId, email: org.email }, 'a login names the member who logged in');
  t.same(find('organization.created')?.actorDetail, { type: 'operator' });
  t.same(find('member.joined', (e) => e.details.memberId === developer.memberId)?.actorDetail, { type: 'member', id: developer.memberId, email: developer.email }, 'who joined is who acted');
  // The fields of before stay as they were.
  t.match(find('api_key.changed', (e) => e.details.keyId === devKey.id), { actor: 'organization', credential: { kind: 'api_key', id: devKey.id } });
  t.notOk(find('api_key.created', (e) => e.details.keyId === ownerKey.id)?.member, "`member` stays absent for the first member's sessions");
  t.ok(all.every((e) => e.actorDetail !== undefined), `every entry names its actor (${all.filter((e) => e.actorDetail === undefined).map((e) => e.type).join(', ')})`);

  // Filtered by member: what the developer did, paged one by one.
  const devEvents: Entry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const url: string = `/auth/audit?member=${developer.memberId}&limit=1${cursor === null ? '' : `&cursor=${cursor}`}`;
    const page: Page = (await gw.pub({ url, headers: bearer(tokens.admin) })).json<Page>();
    devEvents.push(...page.events);
    cursor = page.nextCursor;
    if (cursor === null) break;
  }
  t.same(devEvents.map((e) => e.type), ['api_key.created', 'member.joined'], "the developer's own events, newest first, paged");
  t.ok(devEvents.every((e) => e.actorDetail?.id === developer.memberId));
  const firsts = (await gw.pub({ url: `/auth/audit?member=${firstId}&limit=500`, headers: bearer(tokens.admin) })).json<Page>().events;
  t.ok(firsts.length >= 5 && firsts.every((e) => e.actorDetail?.id === firstId), "the first member's, with the member's own id");
  t.same((await gw.pub({ url: `/auth/audit?member=mem_nobodyatall&limit=500`, headers: bearer(tokens.owner) })).json<Page>().events, [], 'an unknown member: none');
  const typed = (await gw.pub({ url: `/auth/audit?member=${developer.memberId}&type=api_key.created`, headers: bearer(tokens.owner) })).json<Page>().events;
  t.same(typed.map((e) => e.type), ['api_key.created'], 'with a type as well');
  for (const bad of ['org_123', 'mem_', 'mem_a%20b', `mem_${'x'.repeat(80)}`]) assertProblem(t, await gw.pub({ url: `/auth/audit?member=${bad}`, headers: bearer(tokens.owner) }), 400, 1200, `member=${bad}`);
  const byOperator = (await gw.ops({ url: `/admin/audit?org=${org.id}&member=${developer.memberId}&limit=500` })).json<Page>().events;
  t.same(byOperator.map((e) => e.type), ['api_key.created', 'member.joined'], 'the admin audit filters by member too');
  assertProblem(t, await gw.ops({ url: '/admin/audit?member=nope' }), 400, 1200, 'admin: a bad member id');

  // A lockout is the gateway's own decision; the failed attempts before it are nobody's.
  for (let i = 0; i < 10; i++) await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: org.email, password: `wrong-password-number-${i}` } });
  await gw.gateway.audit.flush();
  const locked = (await gw.pub({ url: '/auth/audit?type=login.throttled', headers: bearer(tokens.owner) })).json<Page>().events;
  t.same(locked[0]?.actorDetail, { type: 'gateway' }, 'a lockout: the gateway itself');
  const failed = (await gw.pub({ url: '/auth/audit?type=login.failed', headers: bearer(tokens.owner) })).json<Page>().events;
  t.same(failed[0]?.actorDetail, { type: 'anonymous' }, 'a failed login: nobody authenticated');
}

async function memberIdOf(gw: InjectedGateway, token: string, role: string) {
  return (await gw.pub({ url: '/auth/members', headers: bearer(token) })).json<{ members: Array<{ id: string; role: string }> }>().members.find((m) => m.role === role)!.id;
}
async function emailOf(gw: InjectedGateway, token: string, role: string) {
  return (await gw.pub({ url: '/auth/members', headers: bearer(token) })).json<{ members: Array<{ email: string; role: string }> }>().members.find((m) => m.role === role)!.email;
}

t.test('actors and the member filter on the memory store', async (t) => {
  await actors(t, await injectGateway(t));
});

t.test('actors and the member filter on Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  await actors(t, await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url } }));
});
