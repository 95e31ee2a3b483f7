import t, { type Test } from 'tap';
import { injectGateway } from '../helpers/inject.js';
import { redisCommand, startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { bearer, invite } from './helpers.js';

/**
 * The identity assertion names the member (issue 50, docs/identity.md#members): a login token's
 * carries `member_id` (the first member's for the organization's own login); an API key's stays
 * the organization's, without it; every other claim as before. The member is read once per
 * session and kept: requests after the first read nothing more for it.
 */

const claimsOf = (header: string | string[] | undefined) => JSON.parse(Buffer.from(String(header).split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
const BEFORE = ['aud', 'email', 'environment', 'exp', 'iat', 'iss', 'jti', 'kind', 'name', 'scope', 'sub'];

/** `hgetCalls`: how many HGETs the Redis server has answered (the session's member is one), where there is one. */
async function named(t: Test, env: Record<string, string>, hgetCalls?: () => Promise<number>) {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { ...env, AUTHGATE_UPSTREAM_URL: upstream.url } });
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const dev = await invite(t, gw, owner, 'developer');
  const key = await gw.createApiKey(dev.token);

  const forwarded = async (credential: string) => {
    const res = await gw.pub({ url: '/accounts', headers: bearer(credential) });
    t.equal(res.statusCode, 200, 'forwarded');
    return claimsOf(upstream.requests.at(-1)!.headers['x-authgate-identity']);
  };
  const ownerClaims = await forwarded(owner);
  t.equal(ownerClaims.member_id, `mem_${org.id.slice(4)}`, "the organization's own login: its first member");
  t.same(Object.keys(ownerClaims).sort(), [...BEFORE, 'member_id'].sort(), 'one claim added, the others as before');
  t.equal(ownerClaims.sub, org.id, 'sub stays the organization');
  const devClaims = await forwarded(dev.token);
  t.equal(devClaims.member_id, dev.memberId, "a member's login: that member");
  t.equal(devClaims.sub, org.id);
  t.equal(devClaims.email, org.email, "email stays the organization's");
  const keyClaims = await forwarded(key.apiKey);
  t.equal(keyClaims.member_id, undefined, "an API key's: the organization's, no member (even one a member created)");
  t.same(Object.keys(keyClaims).sort(), [...BEFORE, 'key_id'].sort());
  const before = await hgetCalls?.();
  for (let i = 0; i < 5; i++) {
    await forwarded(dev.token);
    await forwarded(owner);
  }
  if (hgetCalls !== undefined) t.equal(await hgetCalls(), before, 'no read of the member (no HGET at all) per request');
}

t.test('the assertion names the member on the memory store', async (t) => {
  await named(t, {});
});

t.test('the assertion names the member on Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const hgetCalls = async () => {
    const stats = String(await redisCommand(redis.port, 'info', 'commandstats'));
    return Number(/cmdstat_hget:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  };
  await named(t, { AUTHGATE_REDIS_URL: redis.url }, hgetCalls);
});
