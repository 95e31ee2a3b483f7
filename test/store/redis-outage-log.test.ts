/**
 * A Redis the gateway cannot reach is said in the log at once, with its address (never the
 * password), then at a bounded rate while it lasts, and once more when it is back. Before, a
 * gateway that never reached its Redis logged nothing while /readyz answered 503.
 */
import t from 'tap';
import { OUTAGE_LOG_EVERY_MS } from '../../src/store/redis/outage-log.js';
import { eventually, send, startGateway } from '../helpers/gateway.js';
import { freePort, startRedis } from '../helpers/redis.js';

t.test('unreachable Redis: logged at once with the address, at a bounded rate, and when it recovers', async (t) => {
  const port = await freePort(); // nothing listens there yet
  const password = 'redis-password-never-logged';
  const startedAt = Date.now();
  const gw = await startGateway(t, { env: { AUTHGATE_REDIS_URL: `redis://:${password}@127.0.0.1:${port}` } });
  const unreachable = () => gw.logs.records().filter((record) => record['event'] === 'redis_unreachable');

  t.ok(await eventually(async () => unreachable().length >= 1, 20_000, 50), 'the first failed attempt is logged');
  const first = unreachable()[0]!;
  t.equal(first['level'], 40, 'as a warning');
  t.equal(first['address'], `127.0.0.1:${port}`, 'with the address');
  t.match(String(first['msg']), new RegExp(`unreachable at 127\\.0\\.0\\.1:${port}.*ECONNREFUSED`), 'and the reason');
  t.equal((await send(`${gw.opsUrl}/readyz`)).status, 503, 'while /readyz is 503');

  // ioredis retries every 2 s at most: over several attempts, the lines stay within the bound.
  t.ok(await eventually(async () => Date.now() - startedAt > 6_000, 20_000, 100), 'some attempts later');
  const bound = 1 + Math.ceil((Date.now() - startedAt) / OUTAGE_LOG_EVERY_MS);
  t.ok(unreachable().length <= bound, `at most one line per ${OUTAGE_LOG_EVERY_MS} ms (${unreachable().length} <= ${bound})`);

  const redis = await startRedis({ port, password });
  t.teardown(() => redis.stop());
  t.ok(await eventually(async () => gw.logs.records().some((record) => record['event'] === 'redis_reachable'), 20_000, 50), 'one line when it is back');
  t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 20_000, 100), 'and ready');
  t.equal(gw.logs.records().filter((record) => record['event'] === 'redis_reachable').length, 1, 'exactly one');
  t.notOk(gw.logs.text().includes(password), 'the password is never logged');
});
