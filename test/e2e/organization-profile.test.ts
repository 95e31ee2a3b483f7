import t, { type Test } from 'tap';
import { decodeJwt } from 'jose';
import { ADMIN_TOKEN, eventually, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

/**
 * PATCH /auth/organization and the admin API's name and e-mail (issue 31) over real HTTP, on the
 * memory store and on two replicas of one real Redis: the changes and every refusal, the other
 * sessions ended by an e-mail change (not the caller's, not by a name change), the new values in
 * the identity assertion on the other replica, racing e-mail changes and sign-ups with exactly one
 * winner and no lost e-mail, and no address in a log line or the audit trail.
 */

const json = { ...UA, 'content-type': 'application/json' };

function call(gw: StartedGateway, method: string, path: string, body: unknown, token?: string): Promise<Response> {
  return send(`${gw.publicUrl}${path}`, { method, headers: { ...json, ...(token !== undefined && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) });
}
const patch = (gw: StartedGateway, body: unknown, token?: string) => call(gw, 'PATCH', '/auth/organization', body, token);
const adminPatch = (gw: StartedGateway, orgId: string, body: unknown) =>
  send(`${gw.opsUrl}/admin/organizations/${orgId}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const login = (gw: StartedGateway, email: string, password: string) => call(gw, 'POST', '/auth/login', { email, password });
const whoAmI = (gw: StartedGateway, credential: string) => gw.get('/auth/api-key', { authorization: `Bearer ${credential}` });

function problem(t: Test, res: Response, status: number, code: number, what: string): void {
  t.equal(res.status, status, `${what}: ${status}`);
  t.equal(res.status === status ? (res.json() as { code?: number }).code : undefined, code, `${what}: code ${code}`);
}

/** The name and e-mail the upstream was told, for a request through gw with the credential. */
async function upstreamSees(gw: StartedGateway, credential: string): Promise<{ name: unknown; email: unknown }> {
  const res = await gw.get('/organization/me', { authorization: `Bearer ${credential}` });
  if (res.status !== 200) throw new Error(`GET /organization/me: ${res.status}`);
  const claims = decodeJwt(String(gw.upstream.requests.at(-1)?.headers['x-authgate-identity']));
  return { name: claims['name'], email: claims['email'] };
}

async function twoReplicas(t: Test, store: 'memory' | 'redis'): Promise<[StartedGateway, StartedGateway]> {
  if (store === 'memory') {
    const gw = await startGateway(t);
    return [gw, gw];
  }
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  const a = await startGateway(t, { env });
  const b = await startGateway(t, { env });
  t.ok(await eventually(async () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed, 10_000), 'both replicas subscribed');
  return [a, b];
}

let n = 0;
const freshEmail = (what: string) => `${what}-${++n}-${process.pid}@new-domain.test`;

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: name and e-mail changes, their refusals, sessions, the identity on the other replica, the audit`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const org = await a.createOrganization();
    const other = await a.createOrganization();
    const caller = await a.login(org.email, org.password);
    const others = [await b.login(org.email, org.password), await a.login(org.email, org.password)];
    const key = await a.createApiKey(caller);
    // Warm: B has signed (and kept) an assertion with the old profile.
    t.same(await upstreamSees(b, key.apiKey), { name: (await (await a.get('/auth/organization', { authorization: `Bearer ${caller}` })).json()).name, email: org.email });

    // Every refusal changes nothing.
    problem(t, await patch(a, {}, caller), 400, 1222, 'nothing to change');
    problem(t, await patch(a, { currentPassword: org.password }, caller), 400, 1222, 'a password alone changes nothing');
    problem(t, await patch(a, { email: freshEmail('x') }, caller), 400, 1223, 'an e-mail without the current password');
    problem(t, await patch(a, { email: 'not an address', currentPassword: org.password }, caller), 400, 1200, 'a malformed e-mail');
    problem(t, await patch(a, { name: '' }, caller), 400, 1200, 'an empty name');
    problem(t, await patch(a, { name: '   ' }, caller), 400, 1200, 'a blank name');
    problem(t, await patch(a, { name: 'x'.repeat(201) }, caller), 400, 1200, 'a name too long');
    problem(t, await patch(a, { name: 'Acme\u202Eevil' }, caller), 400, 1200, 'a bidirectional control in the name');
    problem(t, await patch(a, { name: 'Acme', role: 'admin' }, caller), 400, 1200, 'an unknown field');
    problem(t, await patch(a, { name: 42 }, caller), 400, 1200, 'a name of the wrong type');
    problem(t, await patch(a, [], caller), 400, 1200, 'not an object');
    problem(t, await send(`${a.publicUrl}/auth/organization`, { method: 'PATCH', headers: { ...json, authorization: `Bearer ${caller}` }, body: '{"name":' }), 400, 1201, 'malformed JSON');
    problem(t, await send(`${a.publicUrl}/auth/organization`, { method: 'PATCH', headers: { ...UA, 'content-type': 'text/plain', authorization: `Bearer ${caller}` }, body: 'name=x' }), 415, 1202, 'not JSON');
    problem(t, await patch(a, { email: freshEmail('x'), currentPassword: 'not the password at all' }, caller), 403, 1217, 'a wrong current password');
    problem(t, await patch(a, { email: other.email, currentPassword: org.password }, caller), 409, 1303, "another organization's e-mail");
    problem(t, await patch(a, { email: other.email.toUpperCase(), currentPassword: org.password }, caller), 409, 1303, "another organization's e-mail, in capitals");
    problem(t, await patch(a, { name: 'New' }, key.apiKey), 403, 1103, 'an API key cannot');
    problem(t, await patch(a, { name: 'New' }), 401, 1101, 'no credential');
    problem(t, await a.get('/auth/organization', { authorization: `Bearer ${key.apiKey}` }), 403, 1103, 'an API key cannot read it here');
    for (const token of others) t.equal((await whoAmI(b, token)).status, 200, 'refusals end no session');

    // A name change: every session goes on, the upstream sees the new name via the other replica.
    const renamed = await patch(a, { name: '  Renamed Ltd – ÄÖÜ  ' }, caller);
    t.equal(renamed.status, 200, 'renamed');
    t.equal(renamed.headers['cache-control'], 'no-store');
    t.match(renamed.json(), { id: org.id, name: 'Renamed Ltd – ÄÖÜ', email: org.email });
    t.same(Object.keys(renamed.json()).sort(), ['createdAt', 'email', 'id', 'member', 'name'], 'the organization and the member asking (issue 50), never a password hash');
    for (const token of others) t.equal((await whoAmI(b, token)).status, 200, 'a name change ends no session');
    let seen: unknown;
    t.ok(await eventually(async () => (seen = await upstreamSees(b, key.apiKey)).name === 'Renamed Ltd – ÄÖÜ'), `the other replica's upstream sees the new name (${JSON.stringify(seen)})`);

    // An e-mail change: the other sessions end on every replica, the caller's and the API key go on.
    const newEmail = freshEmail('Moved');
    const moved = await patch(b, { email: `  ${newEmail.toUpperCase()} `, currentPassword: org.password }, caller);
    t.equal(moved.status, 200, 'e-mail changed');
    t.match(moved.json(), { id: org.id, name: 'Renamed Ltd – ÄÖÜ', email: newEmail.toLowerCase() });
    for (const token of others) t.ok(await eventually(async () => (await whoAmI(a, token)).status === 401), 'another session is refused on the other replica');
    t.equal((await whoAmI(a, caller)).status, 200, "the caller's session goes on");
    t.equal((await whoAmI(a, key.apiKey)).status, 200, 'API keys go on');
    t.ok(await eventually(async () => (seen = await upstreamSees(a, key.apiKey)).email === newEmail.toLowerCase()), `the upstream sees the new e-mail (${JSON.stringify(seen)})`);
    t.match((await a.get('/auth/organization', { authorization: `Bearer ${caller}` })).json(), { email: newEmail.toLowerCase(), name: 'Renamed Ltd – ÄÖÜ' });
    problem(t, await login(a, org.email, org.password), 401, 1105, 'the old e-mail logs in no more');
    t.equal((await login(b, newEmail, org.password)).status, 200, 'the new one does');
    t.equal((await login(a, other.email, other.password)).status, 200, 'another organization is untouched');
    const freed = await a.createOrganization({ email: org.email });
    t.ok(freed.id, 'the old e-mail is free for a sign-up');

    await a.gateway.audit.flush();
    await b.gateway.audit.flush();
    const audit = await a.get('/auth/audit', { authorization: `Bearer ${caller}` });
    const events = (audit.json() as { events: Array<{ type: string; actor: string; details?: Record<string, unknown> }> }).events;
    t.ok(events.some((e) => e.type === 'organization.name_changed' && e.actor === 'organization'), 'the name change is audited');
    const changed = events.find((e) => e.type === 'organization.email_changed');
    t.same(changed?.details, { previousDomain: 'example.test', newDomain: 'new-domain.test', sessionsEnded: 2 }, 'the e-mail change: both domains, never the addresses');
    t.ok(events.some((e) => e.type === 'organization.email_change_failed'), 'the wrong password is audited');
    // Issue 50: an entry names the member who acted by id and e-mail (`actorDetail`, `member`): those aside, no address.
    const withoutActors = (body: string) => JSON.stringify((JSON.parse(body) as { events: Array<Record<string, unknown>> }).events.map(({ actorDetail: _a, member: _m, ...rest }) => rest));
    const everything = [a.logs.text(), b.logs.text(), withoutActors(audit.body), withoutActors((await send(`${a.opsUrl}/admin/audit`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body)].join('\n');
    for (const address of [org.email, newEmail.toLowerCase(), other.email]) t.notOk(everything.includes(address.split('@')[0]!), 'no e-mail address in the logs or the audit trail');
    t.notOk(everything.includes(org.password), 'no password either');
  });

  t.test(`${store}: racing e-mail changes and sign-ups for one address: exactly one winner, no lost e-mail`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    for (let round = 0; round < 2; round++) {
      const target = freshEmail('contested');
      const first = await a.createOrganization();
      const second = await b.createOrganization();
      const [firstToken, secondToken] = [await a.login(first.email, first.password), await b.login(second.email, second.password)];
      const racers = [
        patch(a, { email: target, currentPassword: first.password }, firstToken),
        patch(b, { email: target, currentPassword: second.password }, secondToken),
        send(`${(round % 2 === 0 ? a : b).opsUrl}/admin/organizations`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Late Comer', email: target, password: `an unlisted passphrase, round ${round}` }) }),
      ];
      const answers = await Promise.all(racers);
      const winners = answers.filter((res) => res.status === 200 || res.status === 201);
      t.equal(winners.length, 1, `round ${round}: exactly one winner (${answers.map((r) => r.status).join(', ')})`);
      for (const res of answers) if (res.status !== 200 && res.status !== 201) problem(t, res, 409, 1303, `round ${round}: a loser`);
      const [firstWon, secondWon] = [answers[0]!.status === 200, answers[1]!.status === 200];
      // Every old address still resolves right: the losers' keep working, the winner's moved.
      t.equal((await login(b, first.email, first.password)).status, firstWon ? 401 : 200, `round ${round}: the first's old e-mail`);
      t.equal((await login(a, second.email, second.password)).status, secondWon ? 401 : 200, `round ${round}: the second's old e-mail`);
      const password = firstWon ? first.password : secondWon ? second.password : `an unlisted passphrase, round ${round}`;
      t.equal((await login(b, target, password)).status, 200, `round ${round}: the contested e-mail logs the winner in`);
      for (const loser of [...(firstWon ? [] : [first]), ...(secondWon ? [] : [second])]) problem(t, await login(a, target, loser.password), 401, 1105, `round ${round}: never a loser`);
    }
  });

  t.test(`${store}: the admin API changes name and e-mail: every session ends on an e-mail change, the answer is the organization`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const org = await a.createOrganization();
    const other = await a.createOrganization();
    const tokens = [await a.login(org.email, org.password), await b.login(org.email, org.password)];
    const renamed = await adminPatch(a, org.id, { name: 'By the operator' });
    t.equal(renamed.status, 200);
    t.match(renamed.json(), { id: org.id, name: 'By the operator', email: org.email, rateLimit: null });
    for (const token of tokens) t.equal((await whoAmI(b, token)).status, 200, 'a name change ends no session');
    problem(t, await adminPatch(a, org.id, { email: other.email }), 409, 1303, "another's e-mail");
    problem(t, await adminPatch(a, org.id, { email: 'nope' }), 400, 1200, 'a malformed e-mail');
    problem(t, await adminPatch(a, org.id, { name: 'a\u0000b' }), 400, 1200, 'a control character in the name');
    problem(t, await adminPatch(a, 'org_unknown', { name: 'x' }), 404, 1302, 'an unknown organization');
    const newEmail = freshEmail('admin-moved');
    const moved = await adminPatch(b, org.id, { email: newEmail, rateLimit: '100/1m' });
    t.equal(moved.status, 200);
    t.match(moved.json(), { email: newEmail, rateLimit: '100/60s' });
    for (const token of tokens) t.ok(await eventually(async () => (await whoAmI(a, token)).status === 401), 'every session ends, on every replica');
    t.equal((await login(a, newEmail, org.password)).status, 200, 'the new e-mail logs in');
    await b.gateway.audit.flush();
    const trail = (await send(`${a.opsUrl}/admin/audit?org=${org.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as { events: Array<{ type: string; actor: string }> };
    t.ok(trail.events.some((e) => e.type === 'organization.email_changed' && e.actor === 'admin'), 'audited, by the admin');
    t.ok(trail.events.some((e) => e.type === 'organization.name_changed' && e.actor === 'admin'));
  });
}

t.test('memory: wrong current passwords on an e-mail change count toward the login limits', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => patch(gw, { email: freshEmail('x'), currentPassword: `wrong guess number ${i}` }, token)));
  const statuses = burst.map((res) => res.status);
  t.equal(statuses.filter((s) => s === 403).length, 10, 'ten judged: 403 each');
  t.equal(statuses.filter((s) => s === 429).length, 2, 'the rest: 429');
  problem(t, await login(gw, org.email, org.password), 429, 1108, 'a login from this address: the same counters');
  t.equal((await patch(gw, { name: 'Still fine' }, token)).status, 200, 'a name change needs no password, and the session goes on');
});
