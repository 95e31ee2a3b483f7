import t from 'tap';
import { ADMIN_TOKEN, eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Issue 26: guessing the admin token left no trace (no log line, no metric, no audit event, and
 * the ops port had no access log) and nothing slowed it. Each refused admin request is now logged
 * (never the guessed token), counted, audited with no organization, and limited per client
 * address in the store (so across replicas): past ADMIN_REFUSALS.perAddress, 429 code 1113.
 */

const admin = (gw: StartedGateway, token: string, path = '/admin/audit') => send(`${gw.opsUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
const guess = (i: number) => `guessed-admin-token-${i}-Zq8Xv3Lw`;

async function refusalsMetric(gw: StartedGateway, reason: string): Promise<number> {
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const line = text.split('\n').find((l) => l.startsWith('authgate_admin_refusals_total{') && l.includes(`reason="${reason}"`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

t.test('20 wrong admin tokens: 20 log lines, the metric, 20 audit events with no organization, access lines; then 429 (1113) even for the right token', async (t) => {
  const gw = await startGateway(t);
  for (let i = 0; i < 20; i++) {
    const res = await admin(gw, guess(i));
    t.equal(res.status, 401, `guess ${i}: 401`);
    t.equal(res.json().code, 1107);
  }
  const throttled = await admin(gw, guess(20));
  t.equal(throttled.status, 429, 'the 21st: 429');
  t.equal(throttled.json().code, 1113);
  t.match(throttled.headers['content-type'], /^application\/problem\+json/);
  t.match(throttled.headers['retry-after'], /^\d+$/);
  t.equal((await admin(gw, ADMIN_TOKEN)).status, 429, 'the right token from that address waits too: no oracle while limited');

  const records = gw.logs.records();
  const refused = records.filter((r) => r['event'] === 'admin.refused');
  t.equal(refused.length, 20, 'one warning per refused guess');
  t.match(refused[0], { level: 40, reason: 'bad_admin_token', address: '127.0.0.1', route: '/admin/audit' });
  t.equal(records.filter((r) => r['event'] === 'admin.throttled').length, 1, 'the limit reached: one warning');
  const access = records.filter((r) => r['msg'] === 'request' && r['route'] === '/admin/audit');
  t.equal(access.length, 22, 'the ops port writes the access line of each');
  t.match(access[0], { method: 'GET', status: 401, authReason: 'bad_admin_token', reqId: String });
  t.match(access[20], { status: 429, authReason: 'admin_throttled' });
  const text = gw.logs.text();
  for (let i = 0; i <= 20; i++) t.notOk(text.includes(guess(i)), `guess ${i} is in no log line`);
  t.notOk(text.includes(ADMIN_TOKEN), 'nor the real token');

  t.equal(await refusalsMetric(gw, 'bad_admin_token'), 20, 'authgate_admin_refusals_total{reason="bad_admin_token"}');
  t.equal(await refusalsMetric(gw, 'throttled'), 2, 'and {reason="throttled"}');
  t.notOk((await send(`${gw.opsUrl}/metrics`)).body.includes('guessed-admin-token'), 'no token in a label');

  await gw.gateway.audit.flush();
  const events = (await gw.gateway.storage.store.readAuditEvents({ types: ['admin.refused', 'admin.throttled'], limit: 100 })).events;
  t.equal(events.filter((e) => e.type === 'admin.refused').length, 20, 'each refusal audited');
  t.equal(events.filter((e) => e.type === 'admin.throttled').length, 1, 'the limit reached: audited once');
  t.ok(events.every((e) => e.orgId === undefined && e.actor === 'anonymous' && e.network === '127.0.0.0/24'), 'no organization, the network');
  t.match(events.find((e) => e.type === 'admin.refused'), { details: { reason: 'bad_admin_token', route: '/admin/audit' } });
  t.notOk(JSON.stringify(events).includes('guessed-admin-token'), 'no token in the trail');
});

t.test('the right token is not counted: an operator\'s many requests are never limited', async (t) => {
  const gw = await startGateway(t);
  for (let i = 0; i < 30; i++) t.equal((await admin(gw, ADMIN_TOKEN)).status, 200);
  t.equal(await refusalsMetric(gw, 'bad_admin_token'), 0);
  const missing = await send(`${gw.opsUrl}/admin/audit`);
  t.equal(missing.status, 401, 'no credential: refused and counted as such');
  t.equal(await refusalsMetric(gw, 'missing'), 1);
  t.equal((await send(`${gw.opsUrl}/readyz`)).status, 200, 'health is no admin request');
  t.ok(gw.logs.records().some((r) => r['msg'] === 'request' && r['route'] === '/readyz' && r['status'] === 200), 'and has its access line');
});

t.test('the limit holds across two replicas on one Redis: a parallel burst of 40 guesses gets exactly 20 judged', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '5000' };
  const a = await startGateway(t, { env, upstream });
  const b = await startGateway(t, { env, upstream });
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => admin(i % 2 === 0 ? a : b, guess(i))));
  const statuses = answers.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 401).length, 20, 'exactly 20 judged (401)');
  t.equal(statuses.filter((s) => s === 429).length, 20, 'the rest 429');
  t.ok(await eventually(async () => (await refusalsMetric(a, 'bad_admin_token')) + (await refusalsMetric(b, 'bad_admin_token')) === 20, 5000, 20), 'counted on the two');
  t.equal((await admin(b, ADMIN_TOKEN)).status, 429, 'and the address is limited on both');
});
