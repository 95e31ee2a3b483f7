import t, { type Test } from 'tap';
import { startGateway, type StartedGateway } from '../helpers/gateway.js';
import { call, clock, codeAt, problem, type Clock } from '../helpers/second-factor.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Issue 45, second-factor guessing, as an attacker holding the password (and, for the last test,
 * a live session) would try it, over real HTTP on two replicas sharing one real redis-server:
 * - cycles of login → wrong codes → login again: a right password no longer resets the login
 *   limits, so one address judges no more than its pair's 10 attempts;
 * - the same cycles from two addresses on two replicas: the organization's bound on wrong proofs
 *   (AUTHGATE_MFA_FAILURE_LIMIT) holds across both, and then the right code is refused too;
 * - DELETE /auth/mfa/totp with 101 wrong codes: counted and audited under the same bound; the
 *   right code after it removes nothing;
 * - the mfaTokens one organization is issued: 20 per 5 minutes, whatever the address.
 * The replicas share one clock the test moves by whole TOTP steps (helpers/second-factor.ts).
 */

const ADDRESS_A = '203.0.113.10';
const ADDRESS_B = '198.51.100.20';

let redis: Promise<{ url: string; stop: () => Promise<void> }> | undefined;
t.teardown(async () => (await redis)?.stop());

async function twoReplicas(t: Test, time: Clock, env: Record<string, string> = {}): Promise<[StartedGateway, StartedGateway]> {
  redis ??= startRedis();
  const shared = { AUTHGATE_REDIS_URL: (await redis).url, AUTHGATE_REDIS_TIMEOUT_MS: '1000', AUTHGATE_MFA_ENCRYPTION_KEY: 'one key both replicas share, 32 bytes or more', AUTHGATE_TRUST_PROXY: 'true', ...env };
  const deps = { now: time.now };
  return [await startGateway(t, { env: shared, deps }), await startGateway(t, { env: shared, deps })];
}

async function enrolled(t: Test, gw: StartedGateway, time: Clock) {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { secret } = (await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token)).json() as { secret: string };
  t.equal((await call(gw, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token)).status, 200, 'TOTP enabled');
  time.step();
  return { org, token, secret };
}

/** A code that is not `right` (nor, by the test's clock, any step's right code nearby). */
const wrongFor = (right: string, n: number) => String((Number(right) + 1 + n) % 1_000_000).padStart(6, '0');

t.test('cycles from one address: a right password no longer resets the login limits before the second factor', async (t) => {
  const time = clock();
  const [a, b] = await twoReplicas(t, time);
  const { org, secret } = await enrolled(t, a, time);
  const right = codeAt(secret, time.now());
  const statuses: number[] = [];
  let n = 0;
  // Each round: the password (right) on one replica, then wrong codes on the other until the mfaToken is spent.
  for (let round = 0; round < 4 && !statuses.includes(429); round++) {
    const login = await call(round % 2 === 0 ? a : b, 'POST', '/auth/login', { email: org.email, password: org.password }, undefined, ADDRESS_A);
    if (login.status === 429) {
      statuses.push(429);
      break;
    }
    problem(t, login, 403, 1116, `round ${round + 1}: the password alone`);
    const { mfaToken } = login.json() as { mfaToken: string };
    for (let i = 0; i < 5; i++) {
      const res = await call(round % 2 === 0 ? b : a, 'POST', '/auth/login/mfa', { mfaToken, code: wrongFor(right, n++) }, undefined, ADDRESS_A);
      statuses.push(res.status);
      if (res.status !== 401) break;
    }
  }
  t.equal(statuses.filter((s) => s === 401).length, 8, 'the pair judged 10 attempts: 2 passwords and 8 codes, not 5 codes a login without end');
  t.ok(statuses.includes(429), 'then 429');
  const owner = await call(b, 'POST', '/auth/login', { email: org.email, password: org.password }, undefined, ADDRESS_B);
  problem(t, owner, 403, 1116, 'the owner elsewhere gets an mfaToken');
  const done = await call(a, 'POST', '/auth/login/mfa', { mfaToken: (owner.json() as { mfaToken: string }).mfaToken, code: right }, undefined, ADDRESS_B);
  t.equal(done.status, 200, 'and logs in with the right code: the attacker locked out only its own address');
});

t.test('cycles from two addresses on two replicas: the organization\'s bound holds, then the right code is refused', async (t) => {
  const time = clock();
  const limit = 12;
  const [a, b] = await twoReplicas(t, time, { AUTHGATE_MFA_FAILURE_LIMIT: String(limit) });
  const { org, secret } = await enrolled(t, a, time);
  const right = codeAt(secret, time.now());
  let judged = 0;
  let refused: { status: number; body: string } | undefined;
  let n = 0;
  for (let round = 0; round < 8 && refused === undefined; round++) {
    const address = round % 2 === 0 ? ADDRESS_A : ADDRESS_B;
    const login = await call(round % 2 === 0 ? a : b, 'POST', '/auth/login', { email: org.email, password: org.password }, undefined, address);
    problem(t, login, 403, 1116, `round ${round + 1} from ${address}: the password alone`);
    const { mfaToken } = login.json() as { mfaToken: string };
    for (let i = 0; i < 5; i++) {
      const res = await call(i % 2 === 0 ? b : a, 'POST', '/auth/login/mfa', { mfaToken, code: wrongFor(right, n++) }, undefined, address);
      if (res.status === 401) judged++;
      else {
        refused = res;
        break;
      }
    }
  }
  t.equal(judged, limit, `exactly ${limit} wrong codes judged across both addresses and both replicas`);
  t.equal(refused?.status, 429, 'then the next is refused unjudged');
  t.equal(refused === undefined ? undefined : (JSON.parse(refused.body) as { code: number }).code, 1121);

  // From addresses the login limits have never seen: only the organization's bound refuses.
  for (const [gw, address] of [[a, '192.0.2.30'], [b, '192.0.2.40']] as const) {
    const login = await call(gw, 'POST', '/auth/login', { email: org.email, password: org.password }, undefined, address);
    problem(t, login, 403, 1116, `${address}: the password alone`);
    const res = await call(gw === a ? b : a, 'POST', '/auth/login/mfa', { mfaToken: (login.json() as { mfaToken: string }).mfaToken, code: right }, undefined, address);
    problem(t, res, 429, 1121, `${address}: the right code after the bound is refused`);
    t.ok(Number(res.headers['retry-after']) > 0, 'with Retry-After');
  }
});

t.test('DELETE /auth/mfa/totp: 101 wrong codes with the right password are counted and audited; the right code then removes nothing', async (t) => {
  const time = clock();
  const [a, b] = await twoReplicas(t, time);
  const { org, token, secret } = await enrolled(t, a, time);
  const right = codeAt(secret, time.now());
  const answers: number[] = [];
  for (let i = 0; i < 101; i++) {
    const res = await call(i % 2 === 0 ? a : b, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: wrongFor(right, i) }, token, i % 2 === 0 ? ADDRESS_A : ADDRESS_B);
    answers.push(res.status === 403 || res.status === 429 ? (res.json() as { code: number }).code : res.status);
  }
  t.equal(answers.filter((c) => c === 1119).length, 100, '100 wrong codes judged (1119)');
  t.equal(answers[100], 1121, 'the 101st refused unjudged (429 1121)');
  problem(t, await call(b, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: right }, token), 429, 1121, 'the right code after the bound');
  t.equal((await call(a, 'GET', '/auth/mfa', undefined, token)).json().totp.enabled, true, 'TOTP stays');

  await a.gateway.audit.flush();
  await b.gateway.audit.flush();
  const failed = (await call(a, 'GET', '/auth/audit?type=mfa.code_failed&limit=500', undefined, token)).json() as { events: Array<{ details: { change?: string } }> };
  t.equal(failed.events.length, 100, 'each wrong code audited as mfa.code_failed');
  t.ok(failed.events.every((e) => e.details.change === 'totp_removal'));
});

t.test('mfaTokens one organization is issued: 20 in 5 minutes across replicas and addresses, then 429 1122', async (t) => {
  const time = clock();
  const [a, b] = await twoReplicas(t, time);
  const { org } = await enrolled(t, a, time);
  const answers: number[] = [];
  for (let i = 0; i < 21; i++) {
    const res = await call(i % 2 === 0 ? a : b, 'POST', '/auth/login', { email: org.email, password: org.password }, undefined, `192.0.2.${100 + i}`);
    answers.push((res.json() as { code?: number }).code ?? res.status);
  }
  t.strictSame(answers.slice(0, 20), Array(20).fill(1116), '20 mfaTokens issued');
  t.equal(answers[20], 1122, 'the 21st refused, from an address of its own');
  const other = await enrolled(t, b, time);
  problem(t, await call(a, 'POST', '/auth/login', { email: other.org.email, password: other.org.password }, undefined, '192.0.2.200'), 403, 1116, 'another organization is not held by it');
});
