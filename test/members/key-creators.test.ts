import t, { type Test } from 'tap';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { firstMemberId } from '../../src/store/members.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { bearer, invite } from './helpers.js';

/**
 * `createdBy` on API keys (issue 50), on the memory store and on Redis: the member who created a
 * key, in the create, roll, list, get and change answers and the admin API's listing; a key of
 * no recorded creator (written as the build before members wrote keys) is the first member's; a
 * removed creator's keys stay listed, with its id and no e-mail.
 */

type Creator = { id: string; email: string | null };
type Key = { id: string; createdBy: Creator };

async function creators(t: Test, gw: InjectedGateway) {
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const first: Creator = { id: firstMemberId(org.id), email: org.email };
  const developer = await invite(t, gw, owner, 'developer');
  const dev: Creator = { id: developer.memberId, email: developer.email };

  const ownerKey = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(owner), payload: { name: 'owner' } });
  t.equal(ownerKey.statusCode, 201);
  t.strictSame(ownerKey.json<Key>().createdBy, first, "the create answer names the first member (the organization's login)");
  const devKey = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(developer.token), payload: { name: 'dev' } });
  t.strictSame(devKey.json<Key>().createdBy, dev, 'and the developer for its own key');
  const devKeyId = devKey.json<Key>().id;

  // A key as the build before members wrote it: no creator recorded.
  const legacy = generateApiKey('sandbox', shardTagOf(org.id));
  await gw.gateway.storage.store.createApiKey({ id: legacy.id, orgId: org.id, hash: legacy.hash, displayPrefix: legacy.displayPrefix, createdAt: new Date().toISOString() });

  const rolled = await gw.pub({ method: 'POST', url: `/auth/api-key/${devKeyId}/roll`, headers: bearer(developer.token), payload: { graceSeconds: 60 } });
  t.equal(rolled.statusCode, 201);
  t.strictSame(rolled.json<Key>().createdBy, dev, "a roll's successor is its roller's");
  const successorId = rolled.json<Key>().id;

  const listed = async (token: string) => {
    const res = await gw.pub({ url: '/auth/api-key', headers: bearer(token) });
    t.equal(res.statusCode, 200);
    return new Map(res.json<{ keys: Key[] }>().keys.map((key) => [key.id, key.createdBy]));
  };
  let shown = await listed(owner);
  t.strictSame(shown.get(ownerKey.json<Key>().id), first, 'listed: the owner key, the first member');
  t.strictSame(shown.get(devKeyId), dev, "listed: the developer's key, the developer");
  t.strictSame(shown.get(successorId), dev, 'listed: the successor, the developer');
  t.strictSame(shown.get(legacy.id), first, 'listed: a key of before members, the first member');
  t.strictSame((await listed(developer.token)).get(legacy.id), first, 'the same for any member reading');

  const one = await gw.pub({ url: `/auth/api-key/${devKeyId}`, headers: bearer(owner) });
  t.strictSame(one.json<Key>().createdBy, dev, 'GET one names its creator');
  const changed = await gw.pub({ method: 'PATCH', url: `/auth/api-key/${successorId}`, headers: bearer(developer.token), payload: { name: 'renamed' } });
  t.equal(changed.statusCode, 200);
  t.strictSame(changed.json<Key>().createdBy, dev, 'PATCH answers it too');

  const admin = await gw.ops({ url: `/admin/organizations/${org.id}/api-keys` });
  t.equal(admin.statusCode, 200);
  t.strictSame(new Map(admin.json<{ keys: Key[] }>().keys.map((key) => [key.id, key.createdBy])).get(devKeyId), dev, "the admin API's listing too");

  // The developer leaves: its keys stay, listed with its id, no e-mail.
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/members/${dev.id}`, headers: bearer(owner) })).statusCode, 204);
  shown = await listed(owner);
  t.strictSame(shown.get(devKeyId), { id: dev.id, email: null }, "a removed creator's key stays, with its id and no e-mail");
  t.strictSame(shown.get(successorId), { id: dev.id, email: null }, 'its successor too');
  t.strictSame(shown.get(legacy.id), first, 'the first member still for the others');
}

t.test('createdBy on the memory store', async (t) => {
  await creators(t, await injectGateway(t));
});

t.test('createdBy on Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  await creators(t, await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' } }));
});
