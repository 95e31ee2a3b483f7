/**
 * Brute force against POST /auth/login with parallel bursts: the limits hold however requests
 * interleave (on one gateway and across two replicas on one Redis), an attacker cannot lock the
 * owner out, IPv6 clients count per /64, and the argon2 queue is bounded.
 */
import { availableParallelism } from 'node:os';
import t, { type Test } from 'tap';
import { QUEUE_PER_SLOT } from '../../src/credentials/passwords.js';
import { UA, eventually, send, startGateway, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const json = { 'content-type': 'application/json' };
const trusted = { AUTHGATE_TRUST_PROXY: 'true' };

function login(gw: StartedGateway, email: string, password: string, address: string): Promise<Response> {
  return send(`${gw.publicUrl}/auth/login`, {
    method: 'POST',
    headers: { ...UA, ...json, 'x-forwarded-for': address },
    body: JSON.stringify({ email, password }),
  });
}

function tally(responses: readonly Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of responses) counts[res.status] = (counts[res.status] ?? 0) + 1;
  return counts;
}

/** 40 wrong passwords at once, then 40 more with the right one hidden among them. */
async function burstAgainstOnePair(t: Test, gateways: readonly StartedGateway[], org: { email: string; password: string }, address: string) {
  const on = (i: number) => gateways[i % gateways.length]!;
  const first = await Promise.all(Array.from({ length: 40 }, (_, i) => login(on(i), org.email, `wrong-password-${i}`, address)));
  t.strictSame(tally(first), { 401: 10, 429: 30 }, 'exactly the pair limit (10) of 40 parallel guesses was judged');
  for (const res of first.filter((r) => r.status === 429)) {
    t.equal(res.json().code, 1108);
    t.ok(Number(res.headers['retry-after']) > 0, 'with Retry-After');
  }

  const second = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    login(on(i), org.email, i === 23 ? org.password : `wrong-password-${i}`, address)));
  t.strictSame(tally(second), { 429: 40 }, 'the right password hidden in a burst does not log in once the limit is spent');
}

t.test('a parallel burst against one e-mail from one address judges no more than the limit', async (t) => {
  const gw = await startGateway(t, { env: trusted });
  const org = await gw.createOrganization();
  await burstAgainstOnePair(t, [gw], org, '203.0.113.7');
  t.ok(gw.logs.records().some((r) => r['event'] === 'login.throttled'), 'an audit event when the limit was reached');
  t.equal((await login(gw, org.email, org.password, '198.51.100.20')).status, 200, 'the owner elsewhere is not locked out');
});

t.test('the same burst split across two replicas on one Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  // A generous command timeout: a 503 from a slow Redis on a busy machine is not what this test is about.
  const env = { ...trusted, AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '5000' };
  const a = await startGateway(t, { env, upstream });
  const b = await startGateway(t, { env, upstream });
  for (const gw of [a, b]) t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50), 'ready');
  const org = await a.createOrganization();
  await burstAgainstOnePair(t, [a, b], org, '203.0.113.8');
  t.equal((await login(b, org.email, org.password, '198.51.100.21')).status, 200, 'the owner elsewhere is not locked out');
});

t.test('failures from many addresses do not lock the owner out of an address they logged in from', async (t) => {
  const gw = await startGateway(t, { env: trusted });
  const org = await gw.createOrganization();
  const home = '198.51.100.30';
  t.equal((await login(gw, org.email, org.password, home)).status, 200, 'the owner logs in from home once');

  // Six attacking addresses, nine parallel guesses each (under the pair limit): 54 ≥ the e-mail
  // limit of 50. One address's burst at a time, so that the argon2 queue's bound stays out of it.
  const attackers = Array.from({ length: 6 }, (_, i) => `192.0.2.${10 + i}`);
  const attackFromAll = async () => {
    const responses: Response[] = [];
    for (const address of attackers) {
      responses.push(...(await Promise.all(Array.from({ length: 9 }, (_, i) => login(gw, org.email, `wrong-password-${i}`, address)))));
    }
    return responses;
  };
  t.strictSame(tally(await attackFromAll()), { 401: 50, 429: 4 }, 'the e-mail limit judged 50 and refused the rest');

  const stranger = await login(gw, org.email, org.password, '192.0.2.99');
  t.equal(stranger.status, 429, 'an address the e-mail never logged in from is refused, even with the right password');
  t.equal(stranger.json().code, 1108);
  t.equal((await login(gw, org.email, org.password, home)).status, 200, 'the owner at home logs in');

  const again = tally(await attackFromAll());
  // The first five pairs had used 9 of their 10, the sixth 5 (its last 4 were refused by the e-mail limit).
  t.strictSame(again, { 401: 5 * 1 + 5, 429: 44 }, 'the success reset the e-mail count; each pair kept its own count');
  // A known address is still bounded by its own pair limit.
  const fromHome = await Promise.all(Array.from({ length: 15 }, (_, i) => login(gw, org.email, `wrong-password-${i}`, home)));
  t.strictSame(tally(fromHome), { 401: 10, 429: 5 }, 'at home, the pair limit still holds');
});

t.test('IPv6 clients are counted per /64; IPv4-mapped addresses as IPv4', async (t) => {
  const gw = await startGateway(t, { env: trusted });
  const org = await gw.createOrganization();
  const sameNet = Array.from({ length: 10 }, (_, i) => `2001:db8:7:1::${(i + 1).toString(16)}`);
  const guesses = await Promise.all(sameNet.map((address, i) => login(gw, org.email, `wrong-password-${i}`, address)));
  t.strictSame(tally(guesses), { 401: 10 });
  t.equal((await login(gw, org.email, org.password, '2001:db8:7:1:ffff:ffff:ffff:fffe')).status, 429,
    'a fresh address in the same /64 shares the spent pair limit');
  t.equal((await login(gw, org.email, org.password, '2001:db8:7:2::1')).status, 200, 'the next /64 is someone else');

  const other = await gw.createOrganization();
  const mixed = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    login(gw, other.email, `wrong-password-${i}`, i % 2 === 0 ? '203.0.113.60' : '::ffff:203.0.113.60')));
  t.strictSame(tally(mixed), { 401: 10 });
  t.equal((await login(gw, other.email, other.password, '::ffff:cb00:713c')).status, 429, 'every spelling of 203.0.113.60 shares one count');
  t.equal((await login(gw, other.email, other.password, '203.0.113.60')).status, 429);
});

t.test('a burst beyond the argon2 queue is refused at once with 503 and Retry-After', async (t) => {
  const gw = await startGateway(t, { env: trusted });
  const slots = Math.max(1, availableParallelism() - 1);
  const capacity = slots * (QUEUE_PER_SLOT + 1);
  const burst = capacity + 120;
  // Unknown e-mails from distinct addresses: no login limit is near, each goes to argon2 (the
  // dummy hash). Completion order is recorded to see that refusals did not wait in the queue.
  const finished: number[] = [];
  const responses = await Promise.all(Array.from({ length: burst }, (_, i) =>
    login(gw, `nobody-${i}@example.test`, 'wrong-password-1', `10.9.${i >> 8}.${i & 255}`).then((res) => {
      finished.push(res.status);
      return res;
    })));
  const counts = tally(responses);
  t.strictSame(Object.keys(counts).sort(), ['401', '503'], `only 401 and 503 (${JSON.stringify(counts)})`);
  t.ok((counts[503] ?? 0) > 0, 'some were refused');
  t.ok((counts[401] ?? 0) >= capacity, 'at least what the queue holds was judged');
  for (const res of responses.filter((r) => r.status === 503)) {
    t.equal(res.json().code, 1509);
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
  }
  t.ok(finished.lastIndexOf(503) < finished.lastIndexOf(401), 'refusals came back before the queue had drained');
  t.equal((await login(gw, 'nobody-after@example.test', 'wrong-password-1', '10.8.0.1')).status, 401, 'once drained, logins are judged again');
});
