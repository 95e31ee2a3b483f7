import { readFileSync } from 'node:fs';
import t from 'tap';
import { Redis } from 'ioredis';
import { assertProblem, injectGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { codeAt } from '../helpers/second-factor.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { FIXTURE_ENV, FIXTURE_FILE, type PreviousBuildFixture } from '../fixtures/previous-build/fixture.js';
import { bearer } from './helpers.js';

/**
 * Nothing breaks (issue 50): two organizations, their keys, a login session and a TOTP second
 * factor, as the build before members wrote them to Redis (test/fixtures/previous-build: DUMPs
 * taken from that build, at 8f353ce), restored into a fresh redis-server and served by today's
 * gateway: the logins answer as before, the old token and the keys work, upstream receives the
 * same x-organization-id, and each organization is its own first member, an owner.
 */

const fixture = JSON.parse(readFileSync(FIXTURE_FILE, 'utf8')) as PreviousBuildFixture;
const claimsOf = (header: string | string[] | undefined) => JSON.parse(Buffer.from(String(header).split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

t.test("an organization and keys written by the previous build log in and work unchanged", async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const client = new Redis(redis.url);
  for (const { key, pttl, dump } of fixture.keys) await client.restore(key, pttl > 0 ? pttl : 0, Buffer.from(dump, 'base64'));
  await client.quit();

  // The gateway's clock continues from when the fixture was written (a minute on: the TOTP step
  // used to confirm it is past), so the token the old build issued is as fresh as it was then.
  const started = Date.now();
  const now = () => fixture.at + 60_000 + (Date.now() - started);
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const { AUTHGATE_JWT_SECRET, AUTHGATE_MFA_ENCRYPTION_KEY } = FIXTURE_ENV;
  const gw = await injectGateway(t, { env: { AUTHGATE_JWT_SECRET, AUTHGATE_MFA_ENCRYPTION_KEY, AUTHGATE_REDIS_URL: redis.url, AUTHGATE_UPSTREAM_URL: upstream.url }, deps: { now } });
  const { plain, totp } = fixture;

  // The old login token, issued by the previous build, still works.
  const listed = await gw.pub({ url: '/auth/api-key', headers: bearer(plain.token) });
  t.equal(listed.statusCode, 200, "the previous build's login token works");
  const listedKeys = listed.json<{ keys: Array<{ id: string; name: string; scopes: string[] }> }>().keys;
  t.same(listedKeys.map((k) => k.id).sort(), plain.keys.map((k) => k.id).sort(), 'its keys are listed');
  t.same(listedKeys.find((k) => k.id === plain.keys[1]!.id)?.scopes.slice().sort(), plain.keys[1]!.scopes.slice().sort(), 'with their scopes');

  // Logging in with the e-mail and password: the same answer.
  const login = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: plain.email, password: plain.password } });
  t.equal(login.statusCode, 200, 'logs in with its e-mail and password');
  t.strictSame(Object.keys(login.json<object>()), ['token'], 'the same answer shape');
  const token = login.json<{ token: string }>().token;
  t.strictSame(Object.keys(claimsOf(token)).sort(), Object.keys(claimsOf(plain.token)).sort(), "the login token's claims are the ones the previous build issued");

  // The keys authenticate upstream as the organization.
  for (const key of plain.keys) {
    const res = await gw.pub({ url: '/accounts', headers: bearer(key.apiKey) });
    t.equal(res.statusCode, 200, `key ${key.id} is forwarded`);
    const seen = upstream.requests.at(-1)!.headers;
    t.equal(seen['x-organization-id'], plain.orgId, 'with the same x-organization-id');
    t.match(claimsOf(seen['x-authgate-identity']), { sub: plain.orgId, kind: 'api_key', key_id: key.id }, "and the organization's signed identity");
  }
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(plain.keys[1]!.apiKey) })).statusCode, 200, 'a key with keys:read lists the keys');

  // The organization is its first member, an owner.
  const members = (await gw.pub({ url: '/auth/members', headers: bearer(token) })).json<{ members: Array<{ id: string; email: string; role: string; first: boolean }> }>().members;
  t.match(members, [{ id: `mem_${plain.orgId.slice(4)}`, email: plain.email, role: 'owner', first: true }], 'its first member, an owner');
  t.equal(members.length, 1);
  t.equal((await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { name: 'after' } })).statusCode, 201, 'it manages keys as an owner');

  // The old trail reads, and the first member's filter finds the entries of before members.
  const mine = (await gw.pub({ url: `/auth/audit?member=mem_${plain.orgId.slice(4)}&limit=500`, headers: bearer(token) })).json<{ events: Array<{ type: string; actorDetail?: unknown }> }>().events;
  t.ok(mine.some((e) => e.type === 'api_key.created' && e.actorDetail === undefined), "the first member's filter finds the entries the previous build wrote");

  // The organization with a TOTP second factor: asked for it, then logged in with a code.
  const asked = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: totp.email, password: totp.password } });
  assertProblem(t, asked, 403, 1116, 'its second factor is asked for, as before');
  const finished = await gw.pub({ method: 'POST', url: '/auth/login/mfa', payload: { mfaToken: asked.json<{ mfaToken: string }>().mfaToken, code: codeAt(totp.totpSecret, now()) } });
  t.equal(finished.statusCode, 200, 'the TOTP secret the previous build sealed opens');
  t.strictSame(Object.keys(finished.json<object>()), ['token']);
  const res = await gw.pub({ url: '/accounts', headers: bearer(totp.keys[0]!.apiKey) });
  t.equal(res.statusCode, 200);
  t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], totp.orgId, "its key is forwarded as that organization");
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(plain.keys[0]!.apiKey) })).statusCode, 403, 'a key without keys:read is refused the listing, as before');
});
