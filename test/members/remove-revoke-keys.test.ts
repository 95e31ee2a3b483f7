import t, { type Test } from 'tap';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { bearer, invite } from './helpers.js';

/**
 * Removing a member with `?revokeKeys=true` (issue 50, "or revoked with the removal when asked"):
 * the keys it created are revoked at once on every replica, announced as a key revocation is;
 * the organization's other keys stay; without it (the default) its keys stay.
 */

async function replicas(t: Test) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  const a = await injectGateway(t, { env });
  const b = await injectGateway(t, { env });
  for (let i = 0; i < 400 && !(a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  return { a, b };
}

/** Polls until the credential is refused on gw (a revocation crossing Redis pub/sub), bounded. */
async function until401(gw: InjectedGateway, credential: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 400; i++) {
    status = (await gw.pub({ url: '/auth/scopes', headers: bearer(credential) })).statusCode;
    if (status === 401) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return status;
}

type Events = { events: Array<{ type: string; details: Record<string, unknown>; actorDetail?: Record<string, unknown> }> };

t.test('the keys a removed member created are revoked on both replicas at once when asked; the others stay', async (t) => {
  const { a, b } = await replicas(t);
  const org = await a.createOrganization();
  const owner = await a.login(org.email, org.password);
  const dev = await invite(t, a, owner, 'developer');
  const made = (gw: InjectedGateway, token: string) => gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token) }).then((r) => r.json<{ id: string; apiKey: string }>());
  const devKeys = [await made(a, dev.token), await made(b, dev.token)];
  const ownerKey = await made(b, owner);
  for (const key of [...devKeys, ownerKey]) for (const gw of [a, b]) t.equal((await gw.pub({ url: '/auth/scopes', headers: bearer(key.apiKey) })).statusCode, 200, 'works (and is cached) on each replica');

  assertProblem(t, await a.pub({ method: 'DELETE', url: `/auth/members/${dev.memberId}?revokeKeys=yes`, headers: bearer(owner) }), 400, 1200, 'revokeKeys is true or false');
  t.equal((await a.pub({ method: 'DELETE', url: `/auth/members/${dev.memberId}?revokeKeys=true`, headers: bearer(owner) })).statusCode, 204);
  for (const key of devKeys) for (const gw of [b, a]) t.equal(await until401(gw, key.apiKey), 401, 'its key is refused on each replica');
  for (const gw of [a, b]) t.equal((await gw.pub({ url: '/auth/scopes', headers: bearer(ownerKey.apiKey) })).statusCode, 200, "the owner's key stays");
  const listed = (await b.pub({ url: '/auth/api-key', headers: bearer(owner) })).json<{ keys?: Array<{ id: string }>; apiKeys?: Array<{ id: string }> } & Record<string, unknown>>();
  t.notOk(JSON.stringify(listed).includes(devKeys[0]!.id), 'gone from the listing');

  await a.gateway.audit.flush();
  const events = (await b.pub({ url: '/auth/audit?limit=500', headers: bearer(owner) })).json<Events>().events;
  t.match(events.find((e) => e.type === 'member.removed')?.details, { memberId: dev.memberId, keysRevoked: 2 }, 'the removal counts the keys revoked');
  const deleted = events.filter((e) => e.type === 'api_key.deleted').map((e) => e.details.keyId).sort();
  t.same(deleted, devKeys.map((k) => k.id).sort(), 'each key revoked is audited');
  t.ok(events.filter((e) => e.type === 'api_key.deleted').every((e) => e.details.reason === 'member_removed'), 'with its reason');
});

t.test('the admin API removes a member with its keys; without revokeKeys they stay (memory and Redis)', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  for (const gw of [await injectGateway(t), await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url } })]) {
    const org = await gw.createOrganization();
    const owner = await gw.login(org.email, org.password);
    const keeper = await invite(t, gw, owner, 'admin');
    const leaver = await invite(t, gw, owner, 'admin');
    const kept = await gw.createApiKey(keeper.token);
    const gone = await gw.createApiKey(leaver.token);
    const first = await gw.createApiKey(owner);
    t.equal((await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/${keeper.memberId}` })).statusCode, 204);
    t.equal((await gw.pub({ url: '/auth/scopes', headers: bearer(kept.apiKey) })).statusCode, 200, 'by default the keys stay');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/${leaver.memberId}?revokeKeys=1` }), 400, 1200, 'admin: revokeKeys is true or false');
    t.equal((await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/${leaver.memberId}?revokeKeys=true` })).statusCode, 204);
    t.equal(await until401(gw, gone.apiKey), 401, "the leaver's key is revoked");
    t.equal((await gw.pub({ url: '/auth/scopes', headers: bearer(first.apiKey) })).statusCode, 200, "the first member's stays");
    await gw.gateway.audit.flush();
    const removed = (await gw.ops({ url: `/admin/audit?org=${org.id}&type=member.removed` })).json<Events>().events;
    t.match(removed.map((e) => e.details), [{ memberId: leaver.memberId, keysRevoked: 1 }, { memberId: keeper.memberId, keysRevoked: 0 }]);
  }
});

t.test('the last owner is not removed, and none of its keys revoked', async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(owner);
  assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${org.id}/members/mem_${org.id.slice(4)}?revokeKeys=true` }), 409, 1308, 'the last owner');
  t.equal((await gw.pub({ url: '/auth/scopes', headers: bearer(key.apiKey) })).statusCode, 200, 'its key works on');
});
