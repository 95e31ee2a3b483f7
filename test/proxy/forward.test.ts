import t from 'tap';
import { eventually } from '../helpers/gateway.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';

/**
 * proxy/forward.ts: the route table forwarded with reply-from, by inject on the gateway's side
 * (the real pipeline) and real HTTP to a real loopback upstream on the other.
 */

async function setup(t: Parameters<typeof injectGateway>[0], upstreamPath = '', env: Record<string, string> = {}) {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url + upstreamPath, ...env } });
  const org = await gw.signedUp();
  return { upstream, gw, org };
}

const last = (upstream: RecordingUpstream) => upstream.requests[upstream.requests.length - 1]!;

t.test('what reaches the upstream', async (t) => {
  const { upstream, gw, org } = await setup(t);

  t.test('path and query untouched; the organization and the gateway\'s request id added', async (t) => {
    const res = await gw.pub({ url: '/accounts/42/orders?b=2&a=%20x&a=y', headers: { authorization: `Bearer ${org.apiKey}`, 'x-request-id': 'fwd-1' } });
    t.equal(res.statusCode, 200);
    t.same(res.json(), { method: 'GET', url: '/accounts/42/orders?b=2&a=%20x&a=y', orgId: org.orgId, bodyLength: 0 }, 'the upstream\'s answer, as it gave it');
    const seen = last(upstream);
    t.equal(seen.headers['x-organization-id'], org.orgId);
    t.equal(seen.headers['x-request-id'], 'fwd-1');
    t.equal(res.headers['x-request-id'], 'fwd-1', 'the same id on the answer');
  });

  t.test('the credential never reaches the upstream; client-sent identity and forwarding headers are replaced', async (t) => {
    await gw.pub({
      url: '/accounts',
      headers: {
        authorization: `Bearer ${org.token}`,
        'x-organization-id': 'org_spoofed',
        'x-organization-name': 'spoofed',
        'x_organization_id': 'org_underscore',
        'x-forwarded-for': '6.6.6.6',
        'x-forwarded-host': 'evil.example',
        'x-real-ip': '6.6.6.6',
        forwarded: 'for=6.6.6.6',
        'proxy-authorization': 'Basic c2VjcmV0',
        'x-custom': 'kept',
      },
    });
    const seen = last(upstream);
    t.equal(seen.headers['x-organization-id'], org.orgId);
    t.equal(seen.headers['x-custom'], 'kept', 'other headers pass');
    for (const name of ['authorization', 'proxy-authorization', 'x-organization-name', 'x_organization_id', 'x-real-ip', 'forwarded']) {
      t.equal(seen.headers[name], undefined, `no ${name}`);
    }
    t.equal(seen.headers['x-forwarded-for'], '127.0.0.1', 'the client address the gateway saw, not the claim (no trusted proxy)');
    t.equal(seen.headers['x-forwarded-proto'], 'http');
    t.equal(seen.headers['x-forwarded-host'], 'localhost:80', 'the Host the client asked for (inject\'s), not the claim');
    t.notOk(JSON.stringify(seen.rawHeaders).includes(org.token), 'the token is nowhere in what was sent');
  });

  t.test('bodies of any type are forwarded as they came, not parsed', async (t) => {
    const bodies: Array<[string, string | Buffer]> = [
      ['application/json', '{"not":"parsed", "malformed":'],
      ['text/plain', 'plain text'],
      ['application/octet-stream', Buffer.from([0, 1, 2, 255])],
      ['application/x-www-form-urlencoded', 'a=1&b=2'],
    ];
    for (const [type, body] of bodies) {
      const res = await gw.pub({ method: 'POST', url: '/accounts/created', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': type }, payload: body });
      t.equal(res.statusCode, 201, `${type}: the upstream's status`);
      const seen = last(upstream);
      t.equal(seen.body, Buffer.from(body).toString('utf8'), `${type}: the same bytes`);
      t.equal(seen.headers['content-type'], type);
    }
  });

  t.test('the upstream\'s hop-by-hop headers stay on its side', async (t) => {
    const res = await gw.pub({ url: '/organization/me', headers: { authorization: `Bearer ${org.apiKey}` } });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-upstream'], 'recorded', 'its other headers pass');
    t.equal(res.headers['x-hop'], undefined, 'a header its Connection names is removed');
    t.equal(res.headers['keep-alive'], undefined);
    t.equal(res.headers['x-authgate-environment'], 'sandbox', 'the gateway\'s own headers are on it');
  });

  t.test('every method of the table; HEAD on a GET route', async (t) => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const res = await gw.pub({ method, url: '/accounts/m', headers: { authorization: `Bearer ${org.apiKey}` } });
      t.equal(res.statusCode, 200, method);
      t.equal(last(upstream).method, method);
    }
    const head = await gw.pub({ method: 'HEAD', url: '/organization/me', headers: { authorization: `Bearer ${org.apiKey}` } });
    t.equal(head.statusCode, 200);
    t.equal(head.body, '');
  });
});

t.test('behind a trusted proxy: X-Forwarded-* is the trusted chain, the client first', async (t) => {
  const { upstream, gw, org } = await setup(t, '', { AUTHGATE_TRUST_PROXY: '127.0.0.1' });
  const res = await gw.gateway.publicServer.inject({
    url: '/accounts',
    remoteAddress: '127.0.0.1',
    headers: {
      'user-agent': 'forward-test',
      authorization: `Bearer ${org.apiKey}`,
      'x-forwarded-for': '198.51.100.9, 203.0.113.7',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'api.example.test',
    },
  });
  t.equal(res.statusCode, 200);
  const seen = last(upstream);
  t.equal(seen.headers['x-forwarded-for'], '203.0.113.7, 127.0.0.1', 'the first untrusted address, then the trusted hop');
  t.equal(seen.headers['x-forwarded-proto'], 'https');
  t.equal(seen.headers['x-forwarded-host'], 'api.example.test');
  const bogus = await gw.gateway.publicServer.inject({
    url: '/accounts',
    remoteAddress: '127.0.0.1',
    headers: { 'user-agent': 'forward-test', authorization: `Bearer ${org.apiKey}`, 'x-forwarded-proto': 'gopher' },
  });
  t.equal(bogus.statusCode, 200);
  t.equal(last(upstream).headers['x-forwarded-proto'], 'http', 'a claimed protocol other than http(s) is not believed');
});

t.test('an upstream URL with a path: the request\'s path goes below it', async (t) => {
  for (const base of ['/v1', '/v1/']) {
    const { upstream, gw, org } = await setup(t, base);
    const res = await gw.pub({ url: '/accounts/7?x=1', headers: { authorization: `Bearer ${org.apiKey}` } });
    t.equal(res.statusCode, 200, base);
    t.equal(last(upstream).url, '/v1/accounts/7?x=1', base);
  }
});

t.test('an upstream that cannot be reached: 502 1502, counted, nothing of the error echoed', async (t) => {
  // A port that was just listening and is closed now: a connection there is refused.
  const closed = await startRecordingUpstream();
  await closed.close();
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: closed.url } });
  const { apiKey } = await gw.signedUp();
  // The exact prefix and the subtree below it share one route label: the template, never the path.
  const res = await gw.pub({ url: '/accounts', headers: { authorization: `Bearer ${apiKey}` } });
  const body = assertProblem(t, res, 502, 1502);
  t.notMatch(res.body, /ECONNREFUSED|127\.0\.0\.1/);
  t.match(body.detail, /could not be reached/);
  const metrics = (await gw.ops({ url: '/metrics', bare: true })).body;
  t.match(metrics, /authgate_upstream_errors_total\{[^}]*route="\/accounts\/\*",kind="upstream_unavailable"[^}]*\} 1/);
});

t.test('an upstream that does not answer in time: 504 1504', async (t) => {
  const { upstream, gw, org } = await setup(t, '', { AUTHGATE_UPSTREAM_TIMEOUT_MS: '1000' });
  const release = upstream.holdAnswers();
  t.teardown(release);
  const res = await gw.pub({ url: '/accounts/slow', headers: { authorization: `Bearer ${org.apiKey}` } });
  assertProblem(t, res, 504, 1504);
  t.ok(await eventually(async () => upstream.requests.some((r) => r.url === '/accounts/slow')), 'the request did reach it');
  const metrics = (await gw.ops({ url: '/metrics', bare: true })).body;
  t.match(metrics, /authgate_upstream_errors_total\{[^}]*kind="upstream_timeout"[^}]*\} 1/);
});
