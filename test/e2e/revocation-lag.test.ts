import t from 'tap';
import { eventually, send, startGateway, UA } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * authgate_revocation_propagation_seconds: a revocation committed on A is applied by B, which
 * records how long after A announced it. Two real gateways on one real Redis.
 */

/** A sample's value; every series carries the environment label. */
const metricValue = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

t.test("each replica records how long another's revocation took to reach it", async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url };
  const a = await startGateway(t, { upstream, env });
  const b = await startGateway(t, { upstream, env });
  t.ok(await eventually(async () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed, 20_000), 'both subscribed');
  const metricsOf = async (gw: typeof a) => (await send(`${gw.opsUrl}/metrics`)).body;
  t.equal(metricValue(await metricsOf(b), 'authgate_revocation_propagation_seconds_count'), 0, 'nothing yet');

  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const keys = [await a.createApiKey(token), await a.createApiKey(token), await a.createApiKey(token)];
  for (const key of keys) t.equal((await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'cached on B');
  for (const key of keys) {
    t.equal((await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 204);
  }
  t.ok(await eventually(async () => metricValue(await metricsOf(b), 'authgate_revocation_propagation_seconds_count') === 3, 20_000), 'B observed the three revocations');
  const text = await metricsOf(b);
  const sum = metricValue(text, 'authgate_revocation_propagation_seconds_sum');
  t.ok(sum >= 0 && sum < 30, `their lag adds up to ${sum} s`);
  t.match(text, /authgate_revocation_propagation_seconds_bucket\{le="10",environment="sandbox"\} 3/, 'each within the largest bucket');
  t.equal(metricValue(await metricsOf(a), 'authgate_revocation_propagation_seconds_count'), 0, 'A applied its own locally: nothing to measure');
  for (const key of keys) t.equal((await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 401, 'and B refuses them');
});
