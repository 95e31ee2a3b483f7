import t from 'tap';
import { UA, send, startGateway } from '../helpers/gateway.js';

const json = { 'content-type': 'application/json' };

t.test('failed logins are limited per e-mail and address, without locking the owner out', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_TRUST_PROXY: 'true' } });
  const org = await gw.createOrganization();
  const login = (password: string, address: string, email = org.email) =>
    send(`${gw.publicUrl}/auth/login`, {
      method: 'POST',
      headers: { ...UA, ...json, 'x-forwarded-for': address },
      body: JSON.stringify({ email, password }),
    });

  for (let i = 0; i < 10; i++) t.equal((await login('wrong-password-1', '203.0.113.7')).status, 401, `failure ${i + 1}`);
  const limited = await login(org.password, '203.0.113.7');
  t.equal(limited.status, 429, 'the 11th attempt from that address is refused, even with the right password');
  t.equal(limited.json().code, 1108);
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After within the 15-minute window (${retryAfter})`);
  t.ok(gw.logs.records().some((r) => r['event'] === 'login.throttled'), 'an audit event for repeated failures');

  const owner = await login(org.password, '198.51.100.20');
  t.equal(owner.status, 200, 'the owner logging in from another address is not locked out');

  const other = await gw.createOrganization();
  t.equal((await login(other.password, '203.0.113.7', other.email)).status, 200, 'other e-mails from that address still work');
});

t.test('a success resets the count', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_TRUST_PROXY: 'true' } });
  const org = await gw.createOrganization();
  const login = (password: string) =>
    send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, ...json, 'x-forwarded-for': '192.0.2.1' }, body: JSON.stringify({ email: org.email, password }) });
  for (let i = 0; i < 9; i++) await login('wrong-password-1');
  t.equal((await login(org.password)).status, 200);
  for (let i = 0; i < 9; i++) t.equal((await login('wrong-password-1')).status, 401, 'the count started again');
  t.equal((await login(org.password)).status, 200);
});

t.test('one address spraying many e-mails is limited', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_TRUST_PROXY: 'true' } });
  let last = 0;
  for (let i = 0; i < 101; i++) {
    const res = await send(`${gw.publicUrl}/auth/login`, {
      method: 'POST',
      headers: { ...UA, ...json, 'x-forwarded-for': '192.0.2.99' },
      body: JSON.stringify({ email: `spray-${i}@example.test`, password: 'guess-password-1' }),
    });
    last = res.status;
    if (i < 100) t.equal(res.status, 401);
  }
  t.equal(last, 429, 'the 101st failure from one address in the window');
});

t.test('without a trusted proxy, X-Forwarded-For is ignored', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  for (let i = 0; i < 10; i++) {
    await send(`${gw.publicUrl}/auth/login`, {
      method: 'POST',
      headers: { ...UA, ...json, 'x-forwarded-for': `10.0.0.${i}` },
      body: JSON.stringify({ email: org.email, password: 'wrong-password-1' }),
    });
  }
  const res = await send(`${gw.publicUrl}/auth/login`, {
    method: 'POST',
    headers: { ...UA, ...json, 'x-forwarded-for': '10.0.0.200' },
    body: JSON.stringify({ email: org.email, password: org.password }),
  });
  t.equal(res.status, 429, 'a spoofed X-Forwarded-For does not escape the limit');
});

t.test('the limit holds across replicas on one Redis', async (t) => {
  const { startRedis } = await import('../helpers/redis.js');
  const { eventually } = await import('../helpers/gateway.js');
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_TRUST_PROXY: 'true', AUTHGATE_REDIS_URL: redis.url };
  const a = await startGateway(t, { env });
  const b = await startGateway(t, { env });
  for (const gw of [a, b]) t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50));
  const org = await a.createOrganization();
  const login = (gw: typeof a, password: string) =>
    send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, ...json, 'x-forwarded-for': '203.0.113.50' }, body: JSON.stringify({ email: org.email, password }) });
  for (let i = 0; i < 10; i++) t.equal((await login(i % 2 === 0 ? a : b, 'wrong-password-1')).status, 401);
  t.equal((await login(a, org.password)).status, 429, 'five failures on each replica add up');
  t.equal((await login(b, org.password)).status, 429);
});

t.test('the throttle itself: counts first, settles after', async (t) => {
  const { createMemoryStore } = await import('../../src/store/memory-store.js');
  const { createLoginThrottle } = await import('../../src/guards/login-throttle.js');
  const { Problem } = await import('../../src/problems.js');
  const store = createMemoryStore();
  t.teardown(() => store.close());
  const throttle = createLoginThrottle(store, { perPair: 3, perAddress: 5, perEmail: 4, windowSeconds: 60 });
  const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

  const attempts = await Promise.all([0, 1, 2].map(() => throttle.attempt('a@example.test', '192.0.2.1')));
  t.strictSame(attempts.map((a) => a.exhausted), [false, false, true], 'the third took the pair\'s last');
  const refused = await refusal(throttle.attempt('a@example.test', '192.0.2.1'));
  t.ok(refused instanceof Problem && refused.problem === 'tooManyLoginAttempts', '429 at the pair limit');
  t.ok(refused instanceof Problem && (refused.retryAfterSeconds ?? 0) > 0 && (refused.retryAfterSeconds ?? 0) <= 60);

  await attempts[0]!.notJudged();
  const given = await throttle.attempt('a@example.test', '192.0.2.1');
  t.pass('an attempt that was never judged gave its place back');
  t.ok(await refusal(throttle.attempt('a@example.test', '192.0.2.1')) instanceof Problem, 'and only one');

  await given.succeeded();
  t.equal((await throttle.attempt('a@example.test', '192.0.2.1')).known, true, 'a success resets the pair and makes the address known');

  // The e-mail limit (4) from unknown addresses; 192.0.2.1 is exempt from it now.
  await throttle.attempt('a@example.test', '192.0.2.2');
  await throttle.attempt('a@example.test', '192.0.2.3');
  await throttle.attempt('a@example.test', '192.0.2.4');
  await throttle.attempt('a@example.test', '192.0.2.5');
  t.ok(await refusal(throttle.attempt('a@example.test', '192.0.2.6')) instanceof Problem, 'the e-mail limit refuses a stranger');
  t.equal((await throttle.attempt('a@example.test', '192.0.2.1')).known, true, 'but not the known address');
  t.equal((await throttle.attempt('a@example.test', '192.0.2.1')).exhausted, true, 'its third since the reset');
  t.ok(await refusal(throttle.attempt('a@example.test', '192.0.2.1')) instanceof Problem, 'which keeps its pair limit');
  t.strictSame((await store.readCounters(['login:addr:{192.0.2.1}'])).map((c) => c.count), [5], 'its address count: the success gave its one back');
  t.ok(await refusal(throttle.attempt('b@example.test', '192.0.2.1')) instanceof Problem, 'and its address limit, for every e-mail');
});
