import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import { openRedisStorage } from '../../src/store/redis/store.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import type { Invalidation } from '../../src/store/invalidation.js';
import type { GatewayStore, Revoked } from '../../src/store/store.js';
import { redisCommand, startRedis } from '../helpers/redis.js';
import { newOrganization, newSession, pollUntil } from './store-contract.js';

/**
 * Store#changeOrganizationProfile (store/organization-profiles.ts) on the memory store and a real
 * Redis: what it changes, ends and announces; racing claims; and, on Redis, the states a change
 * cut off between its cross-shard steps leaves (written here by hand), none of which finds the
 * wrong organization or keeps an e-mail taken for good.
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

const stores: Record<string, (t: Test) => Promise<GatewayStore>> = {
  memory: async () => createMemoryStore(),
  redis: async (t) => (await openRedis(t)).store,
};

for (const [kind, open] of Object.entries(stores)) {
  t.test(`${kind}: a change sets name and e-mail, ends the other sessions on an e-mail change only, and says what it revoked`, async (t) => {
    const store = await open(t);
    const org = newOrganization();
    const other = newOrganization();
    await store.createOrganizationIfEmailFree(org);
    await store.createOrganizationIfEmailFree(other);
    const [kept, ended] = [newSession(org.id), newSession(org.id)];
    const otherSession = newSession(other.id);
    for (const session of [kept, ended, otherSession]) t.equal(await store.createSession(session), 'created');

    const renamed = await store.changeOrganizationProfile(org.id, { name: 'Renamed', keepSessionId: kept.id });
    t.match(renamed, { organization: { id: org.id, name: 'Renamed', email: org.email, passwordHash: org.passwordHash }, previous: { name: org.name, email: org.email } });
    t.strictSame(sorted(typeof renamed === 'object' ? renamed.revoked : []), [`profile ${org.id}`], 'a name change: the profile only');
    t.ok(await store.findSession(ended.id), 'no session ended');

    const email = `moved-${randomUUID()}@example.com`;
    const moved = await store.changeOrganizationProfile(org.id, { email, keepSessionId: kept.id });
    t.strictSame(sorted(typeof moved === 'object' ? moved.revoked : []), [`profile ${org.id}`, `session ${ended.id}`], 'an e-mail change: the profile and the other sessions');
    t.ok(await store.findSession(kept.id), "the caller's session stays");
    t.equal(await store.findSession(ended.id), undefined, 'the other one ended');
    t.ok(await store.findSession(otherSession.id), "another organization's stays");
    t.match(await store.findOrganizationByEmail(email), { id: org.id, name: 'Renamed', email });
    t.equal(await store.findOrganizationByEmail(org.email), undefined, 'the old e-mail finds nothing');
    t.match(await store.findOrganizationById(org.id), { name: 'Renamed', email });

    t.equal(await store.changeOrganizationProfile(org.id, { email: other.email }), 'email-taken');
    t.match(await store.findOrganizationById(org.id), { email }, 'a refused change changes nothing');
    t.equal(await store.changeOrganizationProfile(`org_${'0'.repeat(32)}`, { name: 'x' }), undefined, 'no such organization');
    const same = await store.changeOrganizationProfile(org.id, { email, keepSessionId: kept.id });
    t.strictSame(sorted(typeof same === 'object' ? same.revoked : []), [`profile ${org.id}`], 'its own e-mail again: no change, no session ends');
    t.equal(await store.createOrganizationIfEmailFree(newOrganization({ email: org.email })) !== 'email-taken', true, 'the old e-mail is free for a sign-up');
    t.equal(await store.createOrganizationIfEmailFree(newOrganization({ email })), 'email-taken', 'the new one is taken');
    const { organizations } = await store.listOrganizations({ limit: 10, email });
    t.match(organizations, [{ id: org.id, name: 'Renamed' }], 'listed by its new e-mail');
    const byName = await store.listOrganizations({ limit: 10, namePrefix: 'Renamed' });
    t.ok(byName.organizations.some((o) => o.id === org.id), 'and by its new name');
  });

  t.test(`${kind}: racing changes and sign-ups for one e-mail: exactly one winner`, async (t) => {
    const store = await open(t);
    for (let round = 0; round < 10; round++) {
      const email = `contested-${randomUUID()}@example.com`;
      const orgs = [newOrganization(), newOrganization()];
      for (const org of orgs) await store.createOrganizationIfEmailFree(org);
      const results = await Promise.all([
        ...orgs.map((org) => store.changeOrganizationProfile(org.id, { email })),
        store.createOrganizationIfEmailFree(newOrganization({ email })),
      ]);
      t.equal(results.filter((r) => typeof r === 'object').length, 1, `round ${round}: one winner (${results.map((r) => (typeof r === 'object' ? 'won' : r)).join(', ')})`);
      const holder = await store.findOrganizationByEmail(email);
      t.ok(holder, 'the e-mail finds the winner');
      for (const [i, org] of orgs.entries()) {
        const won = typeof results[i] === 'object';
        t.equal((await store.findOrganizationByEmail(org.email))?.id, won ? undefined : org.id, `round ${round}: a loser's old e-mail still finds it, the winner's not`);
        if (won) t.equal(holder?.id, org.id);
      }
    }
  });
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
