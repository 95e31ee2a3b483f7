import t from 'tap';
import { send, startGateway } from '../helpers/gateway.js';
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
