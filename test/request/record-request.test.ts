import t from 'tap';
import { eventually } from '../helpers/gateway.js';
import { injectGateway } from '../helpers/inject.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * request/record-request.ts through the gateway, by inject: after every answer, the request metric
 * by route template, method and status, and one access-log line saying who it was for (never
 * with what credential) and why a credential was refused.
 */

/** A counter's value in the Prometheus text, 0 when the series does not exist. */
function counter(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

t.test('the request metric and the access-log line', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url } });
  const { apiKey, keyId, orgId, token } = await gw.signedUp();
  const metrics = async () => (await gw.ops({ url: '/metrics', bare: true })).body;
  const lineOf = async (requestId: string) => {
    const find = () => gw.logs.records().filter((r) => r['msg'] === 'request' && r['reqId'] === requestId);
    t.ok(await eventually(async () => find().length > 0), `a line for ${requestId}`);
    t.equal(find().length, 1, `exactly one line for ${requestId}`);
    return find()[0]!;
  };

  t.test('counted by route template, method and status, once per request', async (t) => {
    const before = await metrics();
    for (let i = 0; i < 3; i++) await gw.pub({ url: `/accounts/${i}/x`, headers: { authorization: `Bearer ${apiKey}` } });
    await gw.pub({ url: '/accounts/9', headers: { authorization: 'Bearer agk_test_bogus' } });
    const after = await metrics();
    const requests = (text: string, status: string) => counter(text, 'authgate_http_requests_total', { method: 'GET', route: '/accounts/*', status_code: status });
    t.equal(requests(after, '200') - requests(before, '200'), 3);
    t.equal(requests(after, '401') - requests(before, '401'), 1);
    const durations = (text: string) => counter(text, 'authgate_http_request_duration_seconds_count', { method: 'GET', route: '/accounts/*', status_code: '200' });
    t.equal(durations(after) - durations(before), 3, 'and timed');
    const upstreamTimed = (text: string) => counter(text, 'authgate_upstream_request_duration_seconds_count', { route: '/accounts/*' });
    t.equal(upstreamTimed(after) - upstreamTimed(before), 3, 'the upstream\'s time, for forwarded requests that left only');
  });

  t.test('an API key\'s request: the organization and the key id, never the key', async (t) => {
    await gw.pub({ url: '/organization/me', headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': 'rec-key' } });
    const line = await lineOf('rec-key');
    t.match(line, { level: 30, method: 'GET', route: '/organization/me', status: 200, orgId, credentialKind: 'api_key', keyId });
    t.type(line['durationMs'], 'number');
    t.equal(line['authReason'], undefined, 'no reason on an allowed request');
  });

  t.test('a login token\'s request: the organization, no key id', async (t) => {
    await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}`, 'x-request-id': 'rec-jwt' } });
    const line = await lineOf('rec-jwt');
    t.match(line, { route: '/auth/api-key', status: 200, orgId, credentialKind: 'jwt' });
    t.equal(line['keyId'], undefined);
  });

  t.test('a refused credential: its kind and the reason, no organization', async (t) => {
    await gw.pub({ url: '/accounts', headers: { authorization: 'Bearer agk_test_bogus', 'x-request-id': 'rec-bad' } });
    const line = await lineOf('rec-bad');
    t.match(line, { route: '/accounts/*', status: 401, credentialKind: 'api_key', authReason: 'malformed_key' });
    t.equal(line['orgId'], undefined);
    await gw.pub({ url: '/accounts', headers: { 'x-request-id': 'rec-none' } });
    t.match(await lineOf('rec-none'), { status: 401, credentialKind: 'none', authReason: 'missing' });
  });

  t.test('a refusal is labelled by the route it was for; an unknown path is "unmatched"', async (t) => {
    await gw.pub({ url: '/accounts', headers: { 'x-request-id': 'rec-noua' }, bare: true });
    t.match(await lineOf('rec-noua'), { route: '/accounts/*', status: 403 }, 'the User-Agent refusal');
    await gw.pub({ url: '/no/such', headers: { 'x-request-id': 'rec-noua-404' }, bare: true });
    t.match(await lineOf('rec-noua-404'), { route: 'unmatched', status: 403 }, 'the same on an unknown path');
    await gw.pub({ url: '/no/such/path', headers: { 'x-request-id': 'rec-404' } });
    t.match(await lineOf('rec-404'), { route: 'unmatched', status: 404 });
    t.notOk(gw.logs.text().includes('/no/such/path'), 'the raw path is never logged');
    t.notOk(gw.logs.text().includes(apiKey) || gw.logs.text().includes(token), 'no credential anywhere in the log');
  });
});
