import t from 'tap';
import { eventually, startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Security notices on the Redis store: the organization a notice names is read from Redis when it
 * is sent, and a Redis that does not answer then (a paused server) makes the attempt fail as
 * store_unavailable and be retried, delivered once Redis is back; nothing is lost or logged as failed.
 */

t.test('a notice whose organization cannot be read (Redis paused) is retried and delivered once Redis answers', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const gw = await startGateway(t, {
    env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '200', AUTHGATE_NOTIFY_WEBHOOK_URL: hook.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'redis-notices-secret-0123456789abcdefXYZ' },
    deps: { noticeTuning: { baseDelayMs: 50, maxAttempts: 10 } },
  });
  const org = await gw.createOrganization({ name: 'Held In Redis' });
  const outcomes = async () => Object.fromEntries((await gw.gateway.metrics.notices.get()).values.map((v) => [String(v.labels['outcome']), v.value]));

  redis.pause();
  let resumed = false;
  t.teardown(() => {
    if (!resumed) redis.resume();
  });
  gw.gateway.audit.record({ type: 'password.reset_issued', orgId: org.id, actor: 'admin', details: { sessionsEnded: 0 } });
  t.ok(await eventually(async () => ((await outcomes())['retried'] ?? 0) >= 1), 'an attempt failed while Redis was paused, and is retried');
  t.equal(hook.received.length, 0, 'nothing sent without the organization');
  redis.resume();
  resumed = true;
  t.ok(await eventually(async () => (await outcomes())['delivered'] === 1, 10_000), 'delivered once Redis answers');
  t.equal(hook.received.length, 1, 'once');
  const body = JSON.parse(hook.received[0]!.raw.toString('utf8')) as { organization: unknown; type: string };
  t.same(body.organization, { id: org.id, name: 'Held In Redis', email: org.email }, 'the organization as Redis holds it');
  t.notOk(gw.logs.records().some((r) => r['event'] === 'notice_failed'), 'no failure logged');
});
