/**
 * Edges of HTTP on the forwarded routes, as raw bytes on a socket against a real gateway and a
 * real upstream that records what reached it: header names with underscores, Expect:
 * 100-continue, an upstream URL with a base path, and the X-Forwarded-* the upstream gets
 * under each AUTHGATE_TRUST_PROXY setting.
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { startGateway, type StartedGateway } from '../helpers/gateway.js';
import { rawExpectContinue, rawRequest, requestText } from '../helpers/raw-http.js';
import { startRecordingUpstream, type RecordedRequest } from '../helpers/upstream.js';

const portOf = (gw: StartedGateway) => Number(new URL(gw.publicUrl).port);

async function withKey(gw: StartedGateway): Promise<{ orgId: string; apiKey: string; token: string }> {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  return { orgId: org.id, apiKey, token };
}

/** Every header name the upstream received, as sent (rawHeaders alternates name, value). */
const namesOf = (seen: RecordedRequest) => seen.rawHeaders.filter((_, i) => i % 2 === 0);
const valuesOf = (seen: RecordedRequest, name: string) =>
  seen.rawHeaders.filter((_, i) => i % 2 === 1 && seen.rawHeaders[i - 1]!.toLowerCase() === name);

t.test('header names with underscores never reach the upstream', async (t) => {
  const gw = await startGateway(t);
  const { orgId, apiKey, token } = await withKey(gw);
  for (const credential of [apiKey, token]) {
    gw.upstream.requests.length = 0;
    const res = await rawRequest(
      portOf(gw),
      requestText('GET', '/accounts', [
        ['User-Agent', 't'],
        ['Authorization', `Bearer ${credential}`],
        ['x_organization_id', 'org_victim1'],
        ['X-Organization_Id', 'org_victim2'],
        ['X_ORGANIZATION_ID', 'org_victim3'],
        ['x-organization_id', 'org_victim4'],
        ['x_organization-id', 'org_victim5'],
        ['X_Organization_Role', 'admin'],
        ['x_organization_scopes', 'victim:all'],
        ['x_forwarded_for', '6.6.6.6'],
        ['x_custom', 'dropped too'],
        ['x-custom', 'kept'],
      ]),
    );
    t.equal(res.status, 200);
    t.equal(gw.upstream.requests.length, 1);
    const seen = gw.upstream.requests[0]!;
    t.same(namesOf(seen).filter((name) => name.includes('_')), [], 'no header name with an underscore');
    t.same(valuesOf(seen, 'x-organization-id'), [orgId], 'exactly one x-organization-id, the real one');
    t.same(
      namesOf(seen).filter((name) => /^x[-_]organization/i.test(name)).map((n) => n.toLowerCase()).sort(),
      ['x-organization-id', 'x-organization-scopes'],
      'no other identity header in any spelling',
    );
    t.same(valuesOf(seen, 'x-organization-scopes'), ['accounts:read accounts:write organization:read keys:read keys:write'], 'exactly one x-organization-scopes: all five for a login token or a default key');
    t.notOk(JSON.stringify(seen.rawHeaders).includes('victim'), 'no client-chosen organization anywhere');
    t.equal(seen.headers['x-custom'], 'kept', 'ordinary headers still pass');
  }
});

t.test('Expect: 100-continue with a body over 1 MiB is forwarded whole (what curl does)', async (t) => {
  const gw = await startGateway(t);
  const { apiKey, token } = await withKey(gw);
  // 1.5 MiB of varied bytes: a truncated or reordered body would not hash the same.
  const body = Buffer.from(Array.from({ length: 1536 * 1024 }, (_, i) => 97 + ((i * 7919) % 26)));
  const sha = createHash('sha256').update(body).digest('hex');
  for (const [label, credential] of [['API key', apiKey], ['login token', token]] as const) {
    gw.upstream.requests.length = 0;
    const head = requestText('PUT', '/accounts/acc_1/blob', [
      ['User-Agent', 'curl/8.5.0'],
      ['Authorization', `Bearer ${credential}`],
      ['Content-Type', 'application/octet-stream'],
      ['Content-Length', String(body.length)],
      ['Expect', '100-continue'],
    ]);
    // Bounded: the answer to 1.5 MiB over loopback on a busy machine.
    const res = await rawExpectContinue(portOf(gw), head, body, { continueWaitMs: 10_000, timeoutMs: 30_000 });
    t.ok(res.sawContinue, `${label}: the gateway answers 100 Continue`);
    t.equal(res.status, 200, `${label}: 200 from the upstream`);
    t.equal(gw.upstream.requests.length, 1);
    const seen = gw.upstream.requests[0]!;
    t.equal(seen.body.length, body.length, `${label}: the whole body reached the upstream`);
    t.equal(createHash('sha256').update(seen.body, 'latin1').digest('hex'), sha, 'byte for byte');
    t.notOk(seen.headers['expect'], 'Expect is not sent upstream: the gateway has answered it');
    t.match(res.raw, /"bodyLength":1572864/);
  }

  // Without a credential the body is never wanted: 401, nothing upstream.
  gw.upstream.requests.length = 0;
  const head = requestText('PUT', '/accounts/acc_1/blob', [
    ['User-Agent', 'curl/8.5.0'],
    ['Content-Type', 'application/octet-stream'],
    ['Content-Length', String(body.length)],
    ['Expect', '100-continue'],
  ]);
  const anonymous = await rawExpectContinue(portOf(gw), head, body, { continueWaitMs: 10_000, timeoutMs: 30_000 });
  t.equal(anonymous.status, 401);
  t.equal(gw.upstream.requests.length, 0);
});

t.test('an upstream URL with a base path: requests are forwarded below it', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  for (const base of ['/v1', '/v1/', '/api/v2//']) {
    const gw = await startGateway(t, { upstream, env: { AUTHGATE_UPSTREAM_URL: `${upstream.url}${base}` } });
    const { orgId, apiKey, token } = await withKey(gw);
    const prefix = base.replace(/\/+$/, '');
    const cases: Array<[string, string, string]> = [
      ['GET', '/accounts?x=1', `${prefix}/accounts?x=1`],
      ['GET', '/accounts', `${prefix}/accounts`],
      ['GET', '/accounts/', `${prefix}/accounts/`],
      ['POST', '/accounts/acc_1/items?a=%2F&b=2', `${prefix}/accounts/acc_1/items?a=%2F&b=2`],
      ['GET', '/accounts?next=/../admin', `${prefix}/accounts?next=/../admin`],
      ['GET', '/organization/me', `${prefix}/organization/me`],
    ];
    for (const [method, target, expected] of cases) {
      for (const credential of [apiKey, token]) {
        upstream.requests.length = 0;
        const res = await rawRequest(portOf(gw), requestText(method, target, [['User-Agent', 't'], ['Authorization', `Bearer ${credential}`], ['Content-Length', '0']]));
        t.equal(res.status, 200, `${base}: ${method} ${target}`);
        t.same(upstream.requests.map((r) => r.url), [expected], `${base}: ${target} → ${expected}`);
        t.equal(upstream.requests[0]?.headers['x-organization-id'], orgId);
      }
    }
    // Path tricks are still refused before anything is joined.
    upstream.requests.length = 0;
    for (const target of ['/accounts/../v1/admin', '/accounts/%2e%2e/admin', '//accounts']) {
      const res = await rawRequest(portOf(gw), requestText('GET', target, [['User-Agent', 't'], ['Authorization', `Bearer ${apiKey}`]]));
      // `//` is 400 (1240) since issue 45: an empty segment some servers merge.
      t.equal(res.status, target === '//accounts' ? 400 : 404, `${base}: ${target}`);
    }
    t.equal(upstream.requests.length, 0);
  }
});

t.test('forwarding headers: the upstream gets what the gateway computed, never what a client claims', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const spoofed: Array<[string, string]> = [
    ['X-Forwarded-For', '6.6.6.6, 7.7.7.7'],
    ['X-Forwarded-Proto', 'https'],
    ['X-Forwarded-Host', 'evil.example'],
    ['X-Forwarded-Port', '443'],
    ['X-Forwarded-Prefix', '/admin'],
    ['Forwarded', 'for=6.6.6.6;proto=https;host=evil.example'],
    ['X-Real-IP', '6.6.6.6'],
  ];
  /** One forwarded request through a gateway with this AUTHGATE_TRUST_PROXY; what the upstream saw. */
  const through = async (t: Test, gw: StartedGateway, apiKey: string, headers: Array<[string, string]>) => {
    upstream.requests.length = 0;
    const res = await rawRequest(portOf(gw), requestText('GET', '/accounts', [['User-Agent', 't'], ['Authorization', `Bearer ${apiKey}`], ...headers]));
    t.equal(res.status, 200);
    t.equal(upstream.requests.length, 1);
    const seen = upstream.requests[0]!;
    t.equal(valuesOf(seen, 'x-forwarded-for').length, 1, 'one X-Forwarded-For');
    t.equal(valuesOf(seen, 'x-forwarded-proto').length, 1, 'one X-Forwarded-Proto');
    t.ok(valuesOf(seen, 'x-forwarded-host').length <= 1, 'at most one X-Forwarded-Host');
    t.notOk(seen.headers['forwarded'], 'Forwarded is never passed on');
    t.notOk(seen.headers['x-forwarded-port'], 'nor X-Forwarded-Port');
    t.notOk(seen.headers['x-forwarded-prefix'], 'nor X-Forwarded-Prefix');
    t.notOk(seen.headers['x-real-ip'], 'nor X-Real-IP');
    return seen.headers;
  };

  await t.test('no trusted proxy (the default): a direct client\'s claims are replaced', async (t) => {
    const gw = await startGateway(t, { upstream });
    const { apiKey } = await withKey(gw);
    const seen = await through(t, gw, apiKey, spoofed);
    t.equal(seen['x-forwarded-for'], '127.0.0.1', 'the socket address alone');
    t.equal(seen['x-forwarded-proto'], 'http', 'the connection as the gateway sees it');
    t.equal(seen['x-forwarded-host'], 'gateway.test', 'the Host the client asked for');
    t.equal(seen['host'], `127.0.0.1:${upstream.port}`, "Host is the upstream's own, not the client's");
    const plain = await through(t, gw, apiKey, []);
    t.equal(plain['x-forwarded-for'], '127.0.0.1', 'written also when the client sent none');
    t.equal(plain['x-forwarded-proto'], 'http');
  });

  await t.test('a CIDR list without loopback: the header is ignored', async (t) => {
    const gw = await startGateway(t, { upstream, env: { AUTHGATE_TRUST_PROXY: '10.0.0.0/8, 192.168.0.0/16' } });
    const { apiKey } = await withKey(gw);
    const seen = await through(t, gw, apiKey, spoofed);
    t.equal(seen['x-forwarded-for'], '127.0.0.1');
    t.equal(seen['x-forwarded-proto'], 'http');
    t.equal(seen['x-forwarded-host'], 'gateway.test');
  });

  await t.test('a CIDR list with loopback: the trusted chain and the client address', async (t) => {
    const gw = await startGateway(t, { upstream, env: { AUTHGATE_TRUST_PROXY: '127.0.0.1/8, 10.0.0.0/8' } });
    const { apiKey } = await withKey(gw);
    // 10.1.1.1 is trusted, 7.7.7.7 is not: the client is 7.7.7.7 and 6.6.6.6 is its own claim.
    const seen = await through(t, gw, apiKey, [['X-Forwarded-For', '6.6.6.6, 7.7.7.7, 10.1.1.1'], ['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'api.example']]);
    t.equal(seen['x-forwarded-for'], '7.7.7.7, 10.1.1.1, 127.0.0.1');
    t.equal(seen['x-forwarded-proto'], 'https', 'the trusted proxy saw https');
    t.equal(seen['x-forwarded-host'], 'api.example', 'the Host the trusted proxy received');
  });

  await t.test('a hop count of 1 from loopback: the address the proxy appended is the client', async (t) => {
    const gw = await startGateway(t, { upstream, env: { AUTHGATE_TRUST_PROXY: '1' } });
    const { apiKey } = await withKey(gw);
    const seen = await through(t, gw, apiKey, [['X-Forwarded-For', '6.6.6.6, 7.7.7.7'], ['X-Forwarded-Proto', 'https'], ['Forwarded', 'for=6.6.6.6']]);
    t.equal(seen['x-forwarded-for'], '7.7.7.7, 127.0.0.1', 'the client address the gateway used, then the trusted hop');
    t.equal(seen['x-forwarded-proto'], 'https');
    const one = await through(t, gw, apiKey, [['X-Forwarded-For', '8.8.8.8']]);
    t.equal(one['x-forwarded-for'], '8.8.8.8, 127.0.0.1');
    t.equal(one['x-forwarded-proto'], 'http', 'no X-Forwarded-Proto from the proxy: the connection\'s own');
    const odd = await through(t, gw, apiKey, [['X-Forwarded-Proto', 'javascript']]);
    t.equal(odd['x-forwarded-for'], '127.0.0.1', 'no X-Forwarded-For: the socket address');
    t.equal(odd['x-forwarded-proto'], 'http', 'a proto that is not http or https is not passed on');
  });

  await t.test('a hop count of 2 and true', async (t) => {
    const two = await startGateway(t, { upstream, env: { AUTHGATE_TRUST_PROXY: '2' } });
    const twoKey = (await withKey(two)).apiKey;
    t.equal((await through(t, two, twoKey, [['X-Forwarded-For', '6.6.6.6, 7.7.7.7, 10.0.0.9']]))['x-forwarded-for'], '7.7.7.7, 10.0.0.9, 127.0.0.1');
    const all = await startGateway(t, { upstream, env: { AUTHGATE_TRUST_PROXY: 'true' } });
    const allKey = (await withKey(all)).apiKey;
    t.equal((await through(t, all, allKey, [['X-Forwarded-For', '6.6.6.6, 7.7.7.7']]))['x-forwarded-for'], '6.6.6.6, 7.7.7.7, 127.0.0.1', 'true trusts every hop');
  });
});
