import t, { type Test } from 'tap';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { bearer, invite } from './helpers.js';

/**
 * Members across two replicas on one real Redis (issue 50): the last owner under parallel
 * demotions, a removal ending the member's sessions at once on both, invitations accepted in
 * parallel making one member, and invitations' one use, revocation and expiry.
 */

let clock = Date.now();
const now = () => clock;

async function replicas(t: Test) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  const a = await injectGateway(t, { env, deps: { now } });
  const b = await injectGateway(t, { env, deps: { now } });
  for (let i = 0; i < 400 && !(a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  return { a, b };
}

/** Polls a route no role guards (GET /auth/scopes) until the token is refused: the session itself ended. */
async function until401(gw: InjectedGateway, token: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 400; i++) {
    status = (await gw.pub({ url: '/auth/scopes', headers: bearer(token) })).statusCode;
    if (status === 401) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return status;
}

t.test('two owners demoting each other at once on two replicas: one stays an owner', async (t) => {
  const { a, b } = await replicas(t);
  const org = await a.createOrganization();
  let first = await a.login(org.email, org.password);
  const other = await invite(t, a, first, 'owner', b);
  let second = other.token;
  const firstId = (await a.pub({ url: '/auth/members', headers: bearer(first) })).json<{ members: Array<{ id: string; first: boolean }> }>().members.find((m) => m.first)!.id;
  for (let round = 0; round < 3; round++) {
    const [x, y] = await Promise.all([
      a.pub({ method: 'PATCH', url: `/auth/members/${other.memberId}`, headers: bearer(first), payload: { role: 'viewer' } }),
      b.pub({ method: 'PATCH', url: `/auth/members/${firstId}`, headers: bearer(second), payload: { role: 'viewer' } }),
    ]);
    t.equal([x, y].filter((r) => r.statusCode === 200).length, 1, `round ${round}: one demotion passes`);
    const refused = x.statusCode === 200 ? y : x;
    // Refused by the store's count (409 lastOwner) when both passed the role guard; or, when one
    // finished first, the other's session was ended with its role (401) or its role read as viewer (403).
    t.ok([409, 401, 403].includes(refused.statusCode), `round ${round}: the other is refused (${refused.statusCode})`);
    if (refused.statusCode === 409) t.equal(refused.json<{ code: number }>().code, 1308, 'lastOwner');
    const members = (await b.pub({ url: '/auth/members', headers: bearer(x.statusCode === 200 ? first : second) })).json<{ members: Array<{ role: string }> }>().members;
    t.equal(members.filter((m) => m.role === 'owner').length, 1, 'exactly one owner left');
    // The demoted one's sessions ended; make it an owner again and log both in afresh.
    const remaining = x.statusCode === 200 ? first : second;
    const demoted = x.statusCode === 200 ? other.memberId : firstId;
    t.equal((await a.pub({ method: 'PATCH', url: `/auth/members/${demoted}`, headers: bearer(remaining), payload: { role: 'owner' } })).statusCode, 200);
    first = await a.login(org.email, org.password);
    second = await b.login(other.email, other.password);
  }
});

t.test('removing a member ends its sessions at once on both replicas; the keys it created stay', async (t) => {
  const { a, b } = await replicas(t);
  const org = await a.createOrganization();
  const owner = await a.login(org.email, org.password);
  const dev = await invite(t, a, owner, 'developer');
  const onA = await a.login(dev.email, dev.password);
  const onB = await b.login(dev.email, dev.password);
  const key = (await b.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(onB) })).json<{ id: string; apiKey: string }>();
  for (const token of [dev.token, onA, onB]) for (const gw of [a, b]) t.equal((await gw.pub({ url: '/auth/scopes', headers: bearer(token) })).statusCode, 200, 'works (and is cached) on each replica');
  t.equal((await a.pub({ method: 'DELETE', url: `/auth/members/${dev.memberId}`, headers: bearer(owner) })).statusCode, 204);
  for (const token of [dev.token, onA, onB]) for (const gw of [b, a]) t.equal(await until401(gw, token), 401, 'its token is refused on each replica');
  assertProblem(t, await a.pub({ method: 'POST', url: '/auth/login', payload: { email: dev.email, password: dev.password } }), 401, 1105, 'it logs in no more');
  t.equal((await b.pub({ url: '/auth/scopes', headers: bearer(key.apiKey) })).statusCode, 200, 'the key it created stays the organization\'s');
  t.equal((await b.pub({ url: '/auth/scopes', headers: bearer(owner) })).statusCode, 200, 'the owner goes on');
  const audit = (await a.pub({ url: '/auth/audit?type=member.removed', headers: bearer(owner) })).json<{ events: Array<{ details: Record<string, unknown> }> }>().events;
  t.match(audit[0]?.details, { memberId: dev.memberId, sessionsEnded: 3 });
});

t.test('invitations: accepted once (also in parallel on two replicas), revoked, expired by the clock', async (t) => {
  const { a, b } = await replicas(t);
  const org = await a.createOrganization();
  const owner = await a.login(org.email, org.password);
  const issue = async (role = 'viewer') => {
    const res = await a.pub({ method: 'POST', url: '/auth/invitations', headers: bearer(owner), payload: { email: `inv-${Math.random()}@example.test`, role } });
    t.equal(res.statusCode, 201);
    return res.json<{ id: string; token: string; email: string }>();
  };
  const accept = (gw: InjectedGateway, token: string) => gw.pub({ method: 'POST', url: '/auth/invitations/accept', payload: { token, password: 'a-fine-member-password' } });

  const parallel = await issue();
  const answers = await Promise.all([a, b, a, b].map((gw) => accept(gw, parallel.token)));
  t.strictSame(answers.map((r) => r.statusCode).sort(), [200, 400, 400, 400], 'four parallel accepts: one member');
  for (const r of answers.filter((r) => r.statusCode === 400)) t.equal(r.json<{ code: number }>().code, 1236);
  const members = (await b.pub({ url: '/auth/members', headers: bearer(owner) })).json<{ members: Array<{ email: string; role: string }> }>().members;
  t.equal(members.filter((m) => m.email === parallel.email).length, 1, 'one member of that e-mail');
  assertProblem(t, await accept(b, parallel.token), 400, 1236, 'used');

  const revoked = await issue();
  t.equal((await b.pub({ url: '/auth/invitations', headers: bearer(owner) })).json<{ invitations: Array<{ id: string }> }>().invitations.some((i) => i.id === revoked.id), true, 'listed');
  t.equal((await b.pub({ method: 'DELETE', url: `/auth/invitations/${revoked.id}`, headers: bearer(owner) })).statusCode, 204);
  assertProblem(t, await accept(a, revoked.token), 400, 1236, 'revoked');
  assertProblem(t, await b.pub({ method: 'DELETE', url: `/auth/invitations/${revoked.id}`, headers: bearer(owner) }), 404, 1309, 'revoked once');

  const weak = await issue();
  assertProblem(t, await a.pub({ method: 'POST', url: '/auth/invitations/accept', payload: { token: weak.token, password: 'short' } }), 400, 1213, 'the password policy applies');
  t.equal((await accept(a, weak.token)).statusCode, 200, 'and a refused password leaves the invitation usable');

  const late = await issue();
  clock += 7 * 24 * 3600 * 1000 + 1000;
  assertProblem(t, await accept(b, late.token), 400, 1236, 'expired after 7 days');
  assertProblem(t, await accept(b, 'agi_not-a-token'), 400, 1236, 'malformed: the same answer');
  t.notOk(JSON.stringify((await a.pub({ url: '/auth/audit', headers: bearer(await a.login(org.email, org.password)) })).json()).includes(late.token.split('.')[1]!), 'no token in the trail');
});

t.test('an organization created the old way logs in unchanged as its first owner; a member logs in with a token of the same shape', async (t) => {
  const { a, b } = await replicas(t);
  const org = await a.createOrganization();
  const res = await b.pub({ method: 'POST', url: '/auth/login', payload: { email: org.email, password: org.password } });
  t.equal(res.statusCode, 200);
  t.strictSame(Object.keys(res.json<object>()), ['token'], 'the same answer');
  const owner = res.json<{ token: string }>().token;
  const listed = (await a.pub({ url: '/auth/members', headers: bearer(owner) })).json<{ members: Array<{ id: string; email: string; role: string; first: boolean }> }>().members;
  t.match(listed, [{ email: org.email, role: 'owner', first: true, id: `mem_${org.id.slice(4)}` }], 'its first member, an owner, with a stable id');
  const member = await invite(t, a, owner, 'admin');
  const login = await a.pub({ method: 'POST', url: '/auth/login', payload: { email: member.email, password: member.password } });
  t.equal(login.statusCode, 200, "a member's own e-mail and password log in");
  const claims = (token: string) => Object.keys(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as object).sort();
  t.strictSame(claims(login.json<{ token: string }>().token), claims(owner), 'the same claims: nothing new in the token');
  const events = (await a.pub({ url: '/auth/audit?type=login.succeeded', headers: bearer(owner) })).json<{ events: Array<{ member?: { id: string; email: string } }> }>().events;
  t.match(events[0]?.member, { id: member.memberId, email: member.email }, "the member's login names the member");
  t.equal(events.at(-1)?.member, undefined, "the first member's does not: as before");
  assertProblem(t, await a.pub({ method: 'POST', url: '/auth/invitations', headers: bearer(owner), payload: { email: org.email, role: 'viewer' } }), 409, 1303, "the organization's own e-mail is taken");
});

t.test('the admin API lists members, changes a role and removes a member; the last owner stays', async (t) => {
  const { a, b } = await replicas(t);
  const org = await a.createOrganization();
  const owner = await a.login(org.email, org.password);
  const dev = await invite(t, a, owner, 'developer');
  const listed = await b.ops({ url: `/admin/organizations/${org.id}/members` });
  t.equal(listed.statusCode, 200);
  const members = listed.json<{ members: Array<{ id: string; role: string; first: boolean }> }>().members;
  t.strictSame(members.map((m) => m.role), ['owner', 'developer']);
  const firstId = members.find((m) => m.first)!.id;
  assertProblem(t, await b.ops({ method: 'PATCH', url: `/admin/organizations/${org.id}/members/${firstId}`, payload: { role: 'admin' } }), 409, 1308, 'the last owner is not demoted');
  assertProblem(t, await b.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/${firstId}` }), 409, 1308, 'nor removed');
  t.match((await b.ops({ method: 'PATCH', url: `/admin/organizations/${org.id}/members/${dev.memberId}`, payload: { role: 'viewer' } })).json(), { id: dev.memberId, role: 'viewer' });
  t.equal(await until401(a, dev.token), 401, 'a changed role ends its sessions, on the other replica too');
  t.equal((await b.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/${dev.memberId}` })).statusCode, 204);
  assertProblem(t, await b.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/${dev.memberId}` }), 404, 1307, 'once');
  assertProblem(t, await b.ops({ url: '/admin/organizations/org_00000000000000000000000000000000/members' }), 404, 1302, 'no organization');
  const events = (await a.pub({ url: '/auth/audit?type=member.removed', headers: bearer(owner) })).json<{ events: Array<{ actor: string }> }>().events;
  t.equal(events[0]?.actor, 'admin', 'the operator is the actor');
});
