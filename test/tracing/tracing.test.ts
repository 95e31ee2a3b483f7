// OpenTelemetry tracing (issue 33) against a real OTLP/HTTP receiver and a real upstream, the
// gateway in-process on the memory store.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { eventually, send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { listenAuthz } from '../helpers/authz.js';
import { SPAN_KIND, startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../helpers/otlp-receiver.js';

const hexId = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparent = (traceId: string, parentId: string, flags: '01' | '00') => `00-${traceId}-${parentId}-${flags}`;

/** What the exporter reads (the standard OTEL_* names): a short batch delay keeps the test fast. */
function exportTo(endpoint: string, extra: Record<string, string> = {}) {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
  for (const [name, value] of Object.entries(extra)) process.env[name] = value;
}

async function spansOf(receiver: OtlpReceiver, traceId: string, atLeast: (spans: ExportedSpan[]) => boolean): Promise<ExportedSpan[]> {
  const found = await eventually(async () => atLeast(receiver.spans.filter((s) => s.traceId === traceId)), 10_000);
  if (!found) throw new Error(`spans of ${traceId} not exported: ${JSON.stringify(receiver.spans.filter((s) => s.traceId === traceId))}`);
  return receiver.spans.filter((s) => s.traceId === traceId);
}

async function tracedGateway(tt: Test, receiver: OtlpReceiver, env: Record<string, string> = {}): Promise<StartedGateway> {
  exportTo(receiver.url);
  return startGateway(tt, { env: { AUTHGATE_TRACING: 'on', ...env } });
}

t.test('a sampled request: the server span, its children and the client span the upstream is told of', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  // A rate limit too high to refuse: the first request leases budget from the store.
  const gw = await tracedGateway(t, receiver, { AUTHGATE_RATE_LIMIT: '100000/60s' });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);

  const clientTrace = hexId(16);
  const clientSpan = hexId(8);
  // The first request of a key: a store read (a cache miss) and an assertion to sign (the framework's path).
  const first = await gw.get('/accounts?page=2', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(clientTrace, clientSpan, '01'), tracestate: 'vendor=abc' });
  t.equal(first.status, 200);
  // The second: all from the cache (the fast lane).
  const second = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(clientTrace, clientSpan, '01') });
  t.equal(second.status, 200);

  const spans = await spansOf(receiver, clientTrace, (s) => s.filter((x) => x.kind === SPAN_KIND.server).length === 2 && s.filter((x) => x.kind === SPAN_KIND.client).length === 2);
  const servers = spans.filter((s) => s.kind === SPAN_KIND.server);
  const upstreamRequests = gw.upstream.requests.slice(-2);
  for (const [i, server] of servers.entries()) {
    t.equal(server.parentSpanId, clientSpan, 'the server span hangs under the client\'s span');
    t.match(server.name, /^GET \//, 'named by method and route label');
    t.notMatch(server.name, /\?/, 'never the raw target');
    t.equal(server.attributes['http.request.method'], 'GET');
    t.equal(server.attributes['http.response.status_code'], 200);
    t.equal(server.attributes['url.scheme'], 'http');
    t.equal(server.attributes['server.address'], '127.0.0.1');
    t.equal(server.attributes['authgate.credential.kind'], 'api_key');
    t.equal(server.attributes['authgate.decision.reason'], 'ok');
    t.notOk('authgate.organization.id' in server.attributes, 'no organization id unless AUTHGATE_TRACING_ORG_ID=on');
    t.equal(server.resource['service.name'], 'authgate');
    const client = spans.find((s) => s.kind === SPAN_KIND.client && s.parentSpanId === server.spanId);
    t.ok(client, 'a client span under each server span');
    t.equal(client?.attributes['http.response.status_code'], 200);
    // Which upstream request belongs to this server span: the one whose traceparent names its client span.
    const received = upstreamRequests.find((r) => r.headers.traceparent === traceparent(clientTrace, client!.spanId, '01'));
    t.ok(received, `upstream request ${i} carries a traceparent naming the gateway's client span`);
  }
  t.equal(upstreamRequests[0]!.headers.tracestate, 'vendor=abc', 'the client\'s tracestate carried on');
  t.equal(servers[0]!.attributes['http.route'], servers[1]!.attributes['http.route']);
  const children = spans.filter((s) => s.kind === SPAN_KIND.internal).map((s) => s.name).sort();
  t.ok(children.includes('store.find_api_key'), `the store read of the cache miss is a child: ${children}`);
  t.ok(children.includes('identity.sign'), 'the identity signing is a child');
  t.ok(children.includes('rate_limit.lease'), 'the rate-limit lease is a child');
  const serverIds = new Set(servers.map((s) => s.spanId));
  for (const child of spans.filter((s) => s.kind === SPAN_KIND.internal)) t.ok(serverIds.has(child.parentSpanId), `${child.name} hangs under a server span`);
  t.match(receiver.contentTypes[0], /application\/x-protobuf/);

  // The access line of each carries the gateway's span's ids.
  const lines = gw.logs.records().filter((r) => r.msg === 'request' && r.trace_id === clientTrace);
  t.same(lines.map((r) => r.span_id).sort(), servers.map((s) => s.spanId).sort(), 'access lines carry trace_id and the gateway span\'s span_id');
});

t.test('login: argon2 is a child of the login\'s span; refusals are spans with their status', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const gw = await tracedGateway(t, receiver);
  const org = await gw.createOrganization();

  const loginTrace = hexId(16);
  const login = await send(`${gw.publicUrl}/auth/login`, {
    method: 'POST',
    headers: { ...UA, 'content-type': 'application/json', traceparent: traceparent(loginTrace, hexId(8), '01') },
    body: JSON.stringify({ email: org.email, password: org.password }),
  });
  t.equal(login.status, 200);
  const loginSpans = await spansOf(receiver, loginTrace, (s) => s.some((x) => x.kind === SPAN_KIND.server) && s.some((x) => x.name === 'argon2.verify'));
  const loginServer = loginSpans.find((s) => s.kind === SPAN_KIND.server)!;
  t.equal(loginServer.name, 'POST /auth/login');
  t.equal(loginSpans.find((s) => s.name === 'argon2.verify')!.parentSpanId, loginServer.spanId);

  // A log line of the request (not only its access line) carries the gateway's span's ids.
  const token = login.json().token as string;
  const keyTrace = hexId(16);
  const created = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, traceparent: traceparent(keyTrace, hexId(8), '01') } });
  t.equal(created.status, 201);
  const keyServer = (await spansOf(receiver, keyTrace, (s) => s.some((x) => x.kind === SPAN_KIND.server))).find((x) => x.kind === SPAN_KIND.server);
  const event = gw.logs.records().find((r) => r.event === 'api_key.created' && r.trace_id === keyTrace);
  t.equal(event?.span_id, keyServer!.spanId, 'the api_key.created line names the request\'s span');

  const refusedTrace = hexId(16);
  const refused = await gw.get('/accounts', { authorization: 'Bearer agk_test_notakeyatall0000000000000000', traceparent: traceparent(refusedTrace, hexId(8), '01') });
  t.equal(refused.status, 401);
  const denied = (await spansOf(receiver, refusedTrace, (s) => s.some((x) => x.kind === SPAN_KIND.server))).find((x) => x.kind === SPAN_KIND.server);
  t.equal(denied!.attributes['http.response.status_code'], 401);
  t.type(denied!.attributes['authgate.decision.reason'], 'string', 'the reason it was refused');
  t.notOk(receiver.spans.some((s) => s.traceId === refusedTrace && s.kind === SPAN_KIND.client), 'a refused request has no upstream call');
});

t.test('a sampled-out traceparent: nothing exported, and it still reaches the upstream', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const gw = await tracedGateway(t, receiver);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);

  const outTrace = hexId(16);
  const outSpan = hexId(8);
  // Twice: the framework's path (the key's first request, a cache miss), then the fast lane.
  for (const _ of [1, 2]) {
    const res = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(outTrace, outSpan, '00') });
    t.equal(res.status, 200);
    const received = gw.upstream.requests.at(-1)!;
    t.equal(received.headers.traceparent, traceparent(outTrace, outSpan, '00'), 'the trace goes on upstream unchanged, not sampled: no span of the gateway\'s in it');
  }
  const outLines = gw.logs.records().filter((r) => r.msg === 'request' && r.trace_id === outTrace);
  t.equal(outLines.length, 2, 'both access lines carry the client\'s trace');
  for (const line of outLines) t.equal(line.span_id, outSpan, 'and its span id, as with tracing off');
  // Spans are exported in the order they end: once a later sampled request's spans are in, the
  // sampled-out one would have been too.
  const laterTrace = hexId(16);
  await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(laterTrace, hexId(8), '01') });
  await spansOf(receiver, laterTrace, (s) => s.some((x) => x.kind === SPAN_KIND.server));
  t.notOk(receiver.spans.some((s) => s.traceId === outTrace), 'nothing of the sampled-out request exported');
});

t.test('sampled at 0 %: a root request makes no span and no traceparent; a sampled parent is still followed', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  exportTo(receiver.url, { OTEL_TRACES_SAMPLER_ARG: '0' });
  t.teardown(() => {
    delete process.env.OTEL_TRACES_SAMPLER_ARG;
  });
  const gw = await startGateway(t, { env: { AUTHGATE_TRACING: 'on' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);

  // Twice: the framework's path (the key's first request, a cache miss), then the fast lane.
  for (const _ of [1, 2]) {
    const res = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` });
    t.equal(res.status, 200);
    t.notOk('traceparent' in gw.upstream.requests.at(-1)!.headers, 'no traceparent made up for a root the sampler drops');
  }
  const sampledTrace = hexId(16);
  const res = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(sampledTrace, hexId(8), '01') });
  t.equal(res.status, 200);
  const spans = await spansOf(receiver, sampledTrace, (s) => s.some((x) => x.kind === SPAN_KIND.server) && s.some((x) => x.kind === SPAN_KIND.client));
  const client = spans.find((s) => s.kind === SPAN_KIND.client)!;
  t.equal(gw.upstream.requests.at(-1)!.headers.traceparent, traceparent(sampledTrace, client.spanId, '01'), 'a sampled parent is followed (parent-based), the upstream told of the client span');
  t.same([...new Set(receiver.spans.map((s) => s.traceId))], [sampledTrace], 'nothing exported but that trace');
  const traced = gw.logs.records().filter((r) => r.msg === 'request' && 'trace_id' in r);
  t.same(traced.map((r) => r.trace_id), [sampledTrace], 'no access line of a dropped root names a trace');
});

t.test('no exported attribute or event holds a credential, key id, e-mail, name or query (fuzzed)', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const gw = await tracedGateway(t, receiver, { AUTHGATE_TRACING_ORG_ID: 'on' });
  const org = await gw.createOrganization({ name: `Secret Corp ${hexId(4)}` });
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  const secrets = [key.apiKey, key.id, token, org.email, org.password];
  const paths = ['/accounts', '/organization/me', '/auth/api-key', '/nowhere'];
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...paths),
      fc.constantFrom('valid-key', 'valid-token', 'garbled', 'none'),
      fc.stringMatching(/^[a-zA-Z0-9]{8,24}$/),
      async (path, credential, queryValue) => {
        const authorization =
          credential === 'valid-key' ? `Bearer ${key.apiKey}` : credential === 'valid-token' ? `Bearer ${token}` : credential === 'garbled' ? `Bearer ${key.apiKey.slice(0, -3)}zzz` : undefined;
        secrets.push(queryValue);
        const res = await gw.get(`${path}?q=${queryValue}`, { ...(authorization && { authorization }), traceparent: traceparent(hexId(16), hexId(8), '01') });
        return res.status < 500;
      },
    ),
    { numRuns: 25 },
  );
  // One more, waited for: every span of the runs above has been exported before it.
  const lastTrace = hexId(16);
  await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(lastTrace, hexId(8), '01') });
  await spansOf(receiver, lastTrace, (s) => s.some((x) => x.kind === SPAN_KIND.server));
  const wire = Buffer.concat(receiver.bodies).toString('latin1');
  for (const secret of secrets) t.notOk(wire.includes(secret), `never on the wire: ${secret.slice(0, 6)}…`);
  t.notOk(wire.includes(org.email.split('@')[0]!), 'not even the e-mail\'s local part');
  t.ok(receiver.spans.some((s) => s.attributes['authgate.organization.id'] === org.id), 'the organization id, as AUTHGATE_TRACING_ORG_ID=on asks');
  t.notOk(receiver.spans.some((s) => JSON.stringify(s).includes(`Secret Corp`)), 'no organization name');
});

t.test('a dead collector changes no answer and counts the drops', async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  exportTo(`http://127.0.0.1:${port}`, { OTEL_EXPORTER_OTLP_TIMEOUT: '500' });
  const gw = await startGateway(t, { env: { AUTHGATE_TRACING: 'on' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  for (let i = 0; i < 5; i++) {
    const res = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(hexId(16), hexId(8), '01') });
    t.equal(res.status, 200);
  }
  const dropped = async () => {
    const metrics = await send(`${gw.opsUrl}/metrics`);
    const match = /authgate_tracing_spans_dropped_total\{[^}]*reason="export_failed"[^}]*\} (\d+)/.exec(metrics.body);
    return match !== null && Number(match[1]) > 0;
  };
  t.ok(await eventually(dropped, 15_000, 50), 'the spans the collector never took are counted');
});

t.test('tracing off: the client\'s traceparent goes upstream unchanged and into the log lines', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  const trace = hexId(16);
  const span = hexId(8);
  for (const _ of [1, 2]) {
    const res = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}`, traceparent: traceparent(trace, span, '01') });
    t.equal(res.status, 200);
    t.equal(gw.upstream.requests.at(-1)!.headers.traceparent, traceparent(trace, span, '01'), 'unchanged');
  }
  const lines = gw.logs.records().filter((r) => r.msg === 'request' && r.route !== '/auth/login' && r.trace_id === trace);
  t.equal(lines.length, 2, 'both access lines (framework path and fast lane) carry the trace');
  for (const line of lines) t.equal(line.span_id, span);
  const keySpan = hexId(8);
  const created = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, traceparent: traceparent(trace, keySpan, '01') } });
  t.equal(created.status, 201);
  const event = gw.logs.records().find((r) => r.event === 'api_key.created' && r.trace_id === trace);
  t.equal(event?.span_id, keySpan, 'a log line of the request carries the client\'s ids too');
  const plain = await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` });
  t.equal(plain.status, 200);
  const last = gw.logs.records().filter((r) => r.msg === 'request').at(-1)!;
  t.notOk('trace_id' in last, 'no trace, no field');
  t.notOk('traceparent' in gw.upstream.requests.at(-1)!.headers, 'and none made up');
});

t.test('the authorization port (issue 30): a server span per decision under the proxy\'s traceparent, refusals too, and the ids in its access lines', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const gw = await tracedGateway(t, receiver, { AUTHGATE_AUTHZ_PORT: '0' });
  const authz = await listenAuthz(gw);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);

  const trace = hexId(16);
  const proxySpan = hexId(8);
  const ask = (credential: string | undefined) =>
    send(`${authz.url}/authz/forward-auth`, {
      headers: {
        'x-forwarded-method': 'GET',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'api.example.test',
        'x-forwarded-uri': '/accounts?secret-query=1',
        traceparent: traceparent(trace, proxySpan, '01'),
        ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }),
      },
    });
  t.equal((await ask(key.apiKey)).status, 200, 'allowed');
  t.equal((await ask(undefined)).status, 401, 'refused without a credential');
  const spans = await spansOf(receiver, trace, (s) => s.filter((x) => x.kind === SPAN_KIND.server).length === 2);
  const servers = spans.filter((s) => s.kind === SPAN_KIND.server);
  for (const server of servers) {
    t.equal(server.parentSpanId, proxySpan, 'under the proxy\'s span');
    t.notMatch(JSON.stringify(server), /secret-query|agk_/, 'no query, no key');
  }
  const statuses = servers.map((s) => s.attributes['http.response.status_code']).sort();
  t.same(statuses, [200, 401], 'the allow and the refusal, each with its status');
  const allowed = servers.find((s) => s.attributes['http.response.status_code'] === 200)!;
  t.equal(allowed.attributes['authgate.credential.kind'], 'api_key');
  t.equal(allowed.attributes['http.route'], '/accounts/*', 'the route\'s label (a subtree), never the raw target');
  const lines = gw.logs.records().filter((r) => r.msg === 'request' && r.protocol === 'forward_auth');
  t.equal(lines.length, 2, 'two access lines');
  t.same(lines.map((r) => r.span_id).sort(), servers.map((s) => s.spanId).sort(), 'each names its own span');
  t.ok(lines.every((r) => r.trace_id === trace), 'and the trace');
});

t.test('the authorization port with tracing off: the proxy\'s traceparent ids in the access line', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' } });
  const authz = await listenAuthz(gw);
  const trace = hexId(16);
  const span = hexId(8);
  const res = await send(`${authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'GET', 'x-original-uri': '/accounts', traceparent: traceparent(trace, span, '01') } });
  t.equal(res.status, 401);
  const line = gw.logs.records().find((r) => r.msg === 'request' && r.protocol === 'auth_request');
  t.equal(line?.trace_id, trace);
  t.equal(line?.span_id, span);
});
