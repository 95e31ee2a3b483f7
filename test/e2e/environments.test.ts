import t from 'tap';
import { SHARD_TAG_SOURCE, shardTagOf } from '../../src/store/shard-tag.js';
import { ADMIN_TOKEN as ADMIN, send, startGateway } from '../helpers/gateway.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';

t.test('a credential of one environment is useless in the other', async (t) => {
  const production = await startGateway(t, { env: { AUTHGATE_ENVIRONMENT: 'production' } });
  const sandbox = await startGateway(t, { env: { AUTHGATE_ENVIRONMENT: 'sandbox' } });
  const prodOrg = await production.createOrganization({ email: 'same@example.test' });
  const sandOrg = await sandbox.createOrganization({ email: 'same@example.test' });
  const prodToken = await production.login(prodOrg.email, prodOrg.password);
  const sandToken = await sandbox.login(sandOrg.email, sandOrg.password);
  const prodKey = await production.createApiKey(prodToken);
  const sandKey = await sandbox.createApiKey(sandToken);

  t.match(prodKey.apiKey, /^agk_live_/, 'production keys say live');
  t.match(sandKey.apiKey, /^agk_test_/, 'sandbox keys say test');
  const aud = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).aud;
  t.equal(aud(prodToken), 'authgate:production');
  t.equal(aud(sandToken), 'authgate:sandbox');

  for (const [gw, foreign, belongs] of [
    [production, sandKey.apiKey, 'sandbox'],
    [production, sandToken, 'sandbox'],
    [sandbox, prodKey.apiKey, 'production'],
    [sandbox, prodToken, 'production'],
  ] as const) {
    const res = await gw.get('/accounts', { authorization: `Bearer ${foreign}` });
    t.equal(res.status, 401, `a ${belongs} credential elsewhere`);
    t.equal(res.json().code, 1104);
    t.equal(res.json().detail, `This credential belongs to the ${belongs} environment.`, 'the detail names its environment and nothing else');
  }
  t.equal(production.upstream.requests.length + sandbox.upstream.requests.length, 0);
  t.equal((await production.get('/accounts', { authorization: `Bearer ${prodKey.apiKey}` })).status, 200);
  t.equal((await sandbox.get('/accounts', { authorization: `Bearer ${sandToken}` })).status, 200);

  const res = await production.get('/accounts');
  t.equal(res.headers['x-authgate-environment'], 'production', 'the environment in a response header');
  t.equal((await sandbox.get('/nope')).headers['x-authgate-environment'], 'sandbox');
  const metrics = (await send(`${production.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_auth_decisions_total\{kind="api_key",outcome="denied",reason="wrong_environment",environment="production"\} 1/, 'counted in a metric');
  t.match(metrics, /authgate_auth_decisions_total\{kind="jwt",outcome="denied",reason="wrong_environment",environment="production"\} 1/);
  const started = production.logs.records();
  t.ok(started.every((r) => r['environment'] === 'production'), 'every log line carries the environment');
});

t.test('a mistyped environment stops the start with a clear line', async (t) => {
  const gw = await startGatewayProcess({ AUTHGATE_ENVIRONMENT: 'prod' }, { waitReady: false });
  const exit = await gw.exited;
  t.equal(exit.code, 1);
  t.match(gw.output(), /^authgate: AUTHGATE_ENVIRONMENT must be production or sandbox$/m);
});

t.test('production and sandbox on one Redis: nothing crosses over', async (t) => {
  const { startRedis, redisCommand } = await import('../helpers/redis.js');
  const { eventually } = await import('../helpers/gateway.js');
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const production = await startGateway(t, { env: { AUTHGATE_ENVIRONMENT: 'production', AUTHGATE_REDIS_URL: redis.url } });
  const sandbox = await startGateway(t, { env: { AUTHGATE_ENVIRONMENT: 'sandbox', AUTHGATE_REDIS_URL: redis.url } });
  for (const gw of [production, sandbox]) t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50));

  const prodOrg = await production.createOrganization({ email: 'shared@example.test', password: 'production-password' });
  const sandOrg = await sandbox.createOrganization({ email: 'shared@example.test', password: 'sandbox-password-1' });
  t.not(prodOrg.id, sandOrg.id, 'the same e-mail is two independent organizations');
  const loginFails = await send(`${sandbox.publicUrl}/auth/login`, {
    method: 'POST',
    headers: { 'user-agent': 't', 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'shared@example.test', password: 'production-password' }),
  });
  t.equal(loginFails.status, 401, "production's password does not log in to sandbox");

  const prodToken = await production.login(prodOrg.email, prodOrg.password);
  const sandToken = await sandbox.login(sandOrg.email, sandOrg.password);
  const prodKey = await production.createApiKey(prodToken);
  const sandKey = await sandbox.createApiKey(sandToken);
  t.equal((await sandbox.get('/accounts', { authorization: `Bearer ${prodKey.apiKey}` })).status, 401);
  t.equal((await production.get('/accounts', { authorization: `Bearer ${sandToken}` })).status, 401);

  const keys = (await redisCommand(redis.port, 'KEYS', '*')) as string[];
  // `authgate:{<environment>:<shard tag>}:`: the environment is inside every key's hash tag.
  const underEnvironment = new RegExp(`^authgate:\\{(production|sandbox):${SHARD_TAG_SOURCE}\\}:`);
  t.ok(keys.length > 0 && keys.every((k) => underEnvironment.test(k)), 'every record is under its environment');
  t.ok(keys.some((k) => k.startsWith(`authgate:{production:${shardTagOf(prodOrg.id)}}:`)), "production's organization under production, on its tag");
  t.ok(keys.some((k) => k.startsWith(`authgate:{sandbox:${shardTagOf(sandOrg.id)}}:`)), "sandbox's organization under sandbox, on its tag");

  t.equal((await send(`${production.opsUrl}/admin/organizations/${prodOrg.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } })).status, 204);
  t.equal((await production.get('/accounts', { authorization: `Bearer ${prodKey.apiKey}` })).status, 401, 'deleted in production');
  t.equal((await sandbox.get('/accounts', { authorization: `Bearer ${sandKey.apiKey}` })).status, 200, 'sandbox untouched');
  t.equal((await sandbox.get('/accounts', { authorization: `Bearer ${sandToken}` })).status, 200);
  t.equal((await send(`${sandbox.opsUrl}/admin/organizations/${sandOrg.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).status, 200);
});
