import t from 'tap';
import { randomBytes } from 'node:crypto';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { send, startGateway } from '../helpers/gateway.js';

async function scrape(opsUrl: string): Promise<string> {
  const res = await send(`${opsUrl}/metrics`);
  if (res.status !== 200) throw new Error(`metrics: ${res.status}`);
  return res.body;
}
const seriesCount = (text: string) => text.split('\n').filter((line) => line.startsWith('authgate_')).length;

t.test('metrics: names, labels, and no raw path, secret or e-mail in any label', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization({ name: 'Metric Org Name', email: 'metrics-owner@example.test' });
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  await gw.get('/accounts', { authorization: `Bearer ${apiKey}` });
  await gw.get('/accounts', { authorization: `Bearer ${apiKey}` });
  await gw.get('/accounts/acc_1', { authorization: `Bearer ${token}` });
  await gw.get('/accounts', { authorization: `Bearer ${generateApiKey('sandbox', shardTagOf(org.id)).secret}` });
  await gw.get('/accounts');

  const text = await scrape(gw.opsUrl);
  for (const name of [
    'authgate_http_requests_total',
    'authgate_http_request_duration_seconds_bucket',
    'authgate_auth_decisions_total',
    'authgate_credential_cache_hits_total',
    'authgate_credential_cache_misses_total',
    'authgate_credential_cache_evictions_total',
    'authgate_credential_cache_entries',
    'authgate_store_up',
    'authgate_store_command_duration_seconds_bucket',
    'authgate_invalidations_sent_total',
    'authgate_revocation_propagation_seconds_count',
    'authgate_upstream_request_duration_seconds',
    'process_cpu_seconds_total',
    'nodejs_eventloop_lag_seconds',
  ]) {
    t.match(text, new RegExp(`^${name}`, 'm'), `${name} is exported`);
  }
  t.match(text, /authgate_http_requests_total\{method="GET",route="\/accounts\/\*",status_code="200"/);
  t.match(text, /authgate_auth_decisions_total\{kind="api_key",outcome="allowed",reason="ok"/);
  t.match(text, /authgate_auth_decisions_total\{kind="api_key",outcome="denied",reason="unknown_key"/);
  t.match(text, /authgate_auth_decisions_total\{kind="none",outcome="denied",reason="missing"/);
  t.match(text, /authgate_credential_cache_hits_total\{[^}]*\} [1-9]/, 'the second request was a cache hit');
  // The login limits' counters are store calls like the others: timed by operation.
  for (const operation of ['count_attempt', 'settle_attempt']) {
    t.match(text, new RegExp(`^authgate_store_command_duration_seconds_count\\{[^}]*operation="${operation}"[^}]*\\} [1-9]`, 'm'), `${operation} is timed`);
  }
  t.match(text, /^authgate_invalidation_subscribed\{[^}]*\} 1$/m, 'the embedded store is always "subscribed"');
  t.match(text, /environment="sandbox"/, 'labelled with the environment');
  for (const secret of [apiKey, token, org.email, 'Metric Org Name', org.password, '/accounts/acc_1', org.id]) {
    t.notOk(text.includes(secret), 'no secret, e-mail, name, raw path or organization id in a label');
  }
});

t.test('1000 random paths do not grow the series count', async (t) => {
  const gw = await startGateway(t);
  await gw.get('/warm-up-unknown');
  await gw.get('/accounts/warm-up');
  const before = seriesCount(await scrape(gw.opsUrl));
  for (let i = 0; i < 1000; i++) {
    const random = randomBytes(6).toString('hex');
    await gw.get(i % 2 === 0 ? `/${random}` : `/accounts/${random}`);
  }
  const after = await scrape(gw.opsUrl);
  t.equal(seriesCount(after), before, 'the same number of series');
  t.match(after, /route="unmatched",status_code="404"/);
});

t.test('health: livez and readyz on the ops port', async (t) => {
  const gw = await startGateway(t);
  t.equal((await send(`${gw.opsUrl}/livez`)).status, 200);
  const ready = await send(`${gw.opsUrl}/readyz`);
  t.equal(ready.status, 200);
  t.strictSame(ready.json(), { status: 'ready', invalidation: 'subscribed', routes: { hash: gw.gateway.routes.current().hash, source: 'built-in', openapi: 'documented' } });
  gw.gateway.startDraining();
  const draining = await send(`${gw.opsUrl}/readyz`);
  t.equal(draining.status, 503, 'not ready while draining');
  t.equal(draining.json().status, 'draining');
  t.equal(draining.json().routes.hash, gw.gateway.routes.current().hash, 'the table in use, draining too');
  t.equal((await send(`${gw.opsUrl}/livez`)).status, 200, 'still alive');
  t.equal((await gw.get('/livez')).status, 404, 'not on the public port');
});

t.test('request id: a sane x-request-id is kept and returned; anything else is replaced', async (t) => {
  const gw = await startGateway(t);
  const kept = await gw.get('/accounts', { 'x-request-id': 'trace-abc.123' });
  t.equal(kept.headers['x-request-id'], 'trace-abc.123');
  const replaced = await gw.get('/accounts', { 'x-request-id': 'bad id with spaces <script>' });
  t.match(replaced.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  const line = gw.logs.records().find((r) => r['reqId'] === 'trace-abc.123');
  t.ok(line, 'the log line carries it');
  t.equal(line?.['route'], '/accounts/*');
  t.equal(line?.['status'], 401);
  t.type(line?.['durationMs'], 'number');
});
