import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { redisKeys } from '../../src/store/redis/keys.js';
import { openRedisStorage } from '../../src/store/redis/store.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import type { Invalidation } from '../../src/store/invalidation.js';
import type { Revoked } from '../../src/store/store.js';
import { redisCommand, startRedis } from '../helpers/redis.js';
import { newOrganization, newSession, pollUntil } from './store-contract.js';

/**
 * Store#changeOrganizationProfile (store/organization-profiles.ts) on a real Redis, beyond the
 * store contract (organization-profile-contract.ts, run on every store): what another replica
 * hears, and the states a change cut off between its cross-shard steps leaves (written here by
 * hand), none of which finds the wrong organization or keeps an e-mail taken for good.
 */

const PREFIX = 'authgate-test:';
const server = await startRedis();
t.teardown(() => server.stop());
const sorted = (revoked: readonly Revoked[]) => revoked.map((r) => `${r.kind} ${r.cacheKey}`).sort();

async function openRedis(t: Test, environment = `env-${randomUUID()}`) {
  const storage = await openRedisStorage({ url: server.url, prefix: PREFIX, environment, commandTimeoutMs: 1000, invalidationHeartbeatMs: 200 });
  const heard: Invalidation[] = [];
  storage.bus.onInvalidation((invalidation) => heard.push(invalidation));
  t.teardown(() => storage.store.close());
  await pollUntil(10_000, () => storage.store.ping().then(() => true, () => false));
  return { store: storage.store, bus: storage.bus, heard, environment };
}

t.test('redis: a change is announced to the other replicas (profile and ended sessions)', async (t) => {
  const a = await openRedis(t);
  const b = await openRedis(t, a.environment);
  await pollUntil(10_000, () => a.bus.subscribed && b.bus.subscribed);
  b.heard.length = 0;
  const org = newOrganization();
  await a.store.createOrganizationIfEmailFree(org);
  const session = newSession(org.id);
  await a.store.createSession(session);
  await a.store.changeOrganizationProfile(org.id, { email: `x-${randomUUID()}@example.com` });
  await pollUntil(5000, () => b.heard.some((i) => i !== 'all' && i.some((r) => r.kind === 'profile')));
  const heard = b.heard.flatMap((i) => (i === 'all' ? [] : i));
  t.strictSame(sorted(heard), [`profile ${org.id}`, `session ${session.id}`]);
});

t.test('redis: the states of a change cut off between its steps find nothing wrong and keep no e-mail taken', async (t) => {
  const { store, environment } = await openRedis(t);
  const keys = redisKeys(PREFIX, environment);
  const claim = (email: string) => keys.shard(shardTagOf(email)).emailClaim(email);
  const pending = (email: string) => `${keys.shard(shardTagOf(email)).base}ep:${email}`;
  const org = newOrganization();
  await store.createOrganizationIfEmailFree(org);

  // Cut off after step 1: the new e-mail claimed (and marked pending), the record unchanged.
  const wanted = `wanted-${randomUUID()}@example.com`;
  await redisCommand(server.port, 'SET', claim(wanted), org.id);
  await redisCommand(server.port, 'SET', pending(wanted), org.id, 'PX', '60000');
  t.equal(await store.findOrganizationByEmail(wanted), undefined, 'the claimed e-mail finds nothing: the record holds another');
  t.match(await store.findOrganizationByEmail(org.email), { id: org.id }, 'the old e-mail still logs in');
  t.equal(await store.createOrganizationIfEmailFree(newOrganization({ email: wanted })), 'email-taken', 'while pending, a sign-up does not take it (it may be a change in flight)');
  await redisCommand(server.port, 'DEL', pending(wanted));
  const late = newOrganization({ email: wanted });
  t.strictSame(await store.createOrganizationIfEmailFree(late), late, 'once the mark is gone, the left-over claim is released and the sign-up wins');
  t.equal((await store.findOrganizationByEmail(wanted))?.id, late.id);

  // The same organization retries its change after being cut off: its own claim is no obstacle.
  const again = `again-${randomUUID()}@example.com`;
  await redisCommand(server.port, 'SET', claim(again), org.id);
  t.match(await store.changeOrganizationProfile(org.id, { email: again }), { organization: { email: again } }, 'its own left-over claim is taken up');

  // Cut off after step 2: the record holds the new e-mail, the old claim was never released.
  const before = again;
  const after = `after-${randomUUID()}@example.com`;
  await redisCommand(server.port, 'HSET', keys.shard(shardTagOf(org.id)).organization((await import('../../src/store/redis/packing.js')).packId(org.id)), 'email', after);
  await redisCommand(server.port, 'SET', claim(after), org.id);
  t.equal(await store.findOrganizationByEmail(before), undefined, 'the old claim finds nothing');
  t.equal((await store.findOrganizationByEmail(after))?.id, org.id, 'the new e-mail logs in');
  const reuse = newOrganization({ email: before });
  t.strictSame(await store.createOrganizationIfEmailFree(reuse), reuse, 'a sign-up with the old e-mail releases the left-over claim');
  t.equal(await store.changeOrganizationProfile(org.id, { email: before }), 'email-taken', 'and holds it from then on');
});
