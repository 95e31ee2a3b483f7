import { ScopeTable } from '../../src/authz/scopes.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';

/** The built-in table's scopes (what the request paths read with no routes file). */
const BUILTIN_SCOPE_TABLE = new ScopeTable(new Map(Object.entries(BUILTIN_ROUTES_FILE.scopes ?? {})));
import { ALL_SCOPES_GRANT, grantOf } from '../../src/authz/scopes.js';
import t from 'tap';
import { removeHopByHopHeaders, rewriteIdentityHeaders, type ForwardedInfo, type OutgoingHeaders } from '../../src/proxy/identity-headers.js';
import { upstreamProblem } from '../../src/proxy/upstream-errors.js';
import { Problem } from '../../src/problems.js';
import type { Principal } from '../../src/credentials/principal.js';

const principal: Principal = { orgId: 'org_real', via: 'api_key', credentialId: 'key_1', scopes: ALL_SCOPES_GRANT };
const direct: ForwardedInfo = { for: '192.0.2.10', proto: 'http', host: 'gateway.example' };

/** What node hands over for a request whose client tried everything. */
const hostile = (): OutgoingHeaders => ({
  host: 'gateway.example',
  'user-agent': 'curl/8',
  accept: 'application/json',
  'content-type': 'application/json',
  'content-length': '12',
  'x-custom': 'kept',
  authorization: 'Bearer agk_live_secret',
  'proxy-authorization': 'Basic Zm9vOmJhcg==',
  'x-organization-id': 'org_spoofed',
  'x-organization-name': 'Spoofed Inc',
  'x-organization-email': 'ceo@spoofed.example',
  'x-organization-': 'empty suffix',
  'x-organization-id-2': ['a', 'b'],
  'x-request-id': 'client-chosen',
  connection: 'keep-alive, x-custom-hop',
  'keep-alive': 'timeout=5',
  'proxy-connection': 'keep-alive',
  'proxy-authenticate': 'Basic',
  te: 'trailers',
  trailer: 'x-checksum',
  upgrade: 'websocket',
  'transfer-encoding': 'chunked',
  'x-forwarded-for': '6.6.6.6',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'http',
  'x-forwarded-prefix': '/admin',
  forwarded: 'for=6.6.6.6;proto=http',
  'x-real-ip': '6.6.6.6',
  expect: '100-continue',
  x_organization_id: 'org_underscore',
  'x-organization_id': 'org_mixed',
  x_organization_role: 'admin',
  x_forwarded_for: '6.6.6.6',
  x_custom: 'a CGI upstream would read this as HTTP_X_CUSTOM',
});

const REMOVED_ALWAYS = [
  'authorization',
  'proxy-authorization',
  'x-organization-name',
  'x-organization-email',
  'x-organization-',
  'x-organization-id-2',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'transfer-encoding',
  'expect',
  'forwarded',
  'x-real-ip',
  'x-forwarded-prefix',
  'x_organization_id',
  'x-organization_id',
  'x_organization_role',
  'x_forwarded_for',
  'x_custom',
];

t.test('rewriteIdentityHeaders', async (t) => {
  const input = hostile();
  const out = rewriteIdentityHeaders(input, principal, 'req-123', direct, null, BUILTIN_SCOPE_TABLE);
  t.not(out, input, 'a new object');
  t.ok('authorization' in input, 'the request\'s own headers are left as they were');
  for (const name of REMOVED_ALWAYS) t.notOk(name in out, `${name} removed`);
  t.equal(out['x-organization-id'], 'org_real');
  t.equal(out['x-request-id'], 'req-123');
  t.equal(out['x-organization-scopes'], 'accounts:read accounts:write organization:read keys:read keys:write', 'every scope, space-separated');
  t.equal(
    rewriteIdentityHeaders(hostile(), { ...principal, scopes: grantOf(['keys:read', 'accounts:read']) }, 'r', direct, null, BUILTIN_SCOPE_TABLE)['x-organization-scopes'],
    'accounts:read keys:read',
    "a narrow key's own, in the documented order (the client's x-organization-scopes was dropped)",
  );
  t.same(
    Object.keys(out).sort(),
    ['accept', 'content-length', 'content-type', 'host', 'user-agent', 'x-custom', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-organization-id', 'x-organization-scopes', 'x-request-id'],
    'only ordinary headers and the ones set by the gateway remain',
  );
  t.equal(out['x-custom'], 'kept');
  t.equal(out['user-agent'], 'curl/8');
  t.equal(out['content-type'], 'application/json');
  t.same(
    Object.keys(out).filter((name) => name.startsWith('x-organization-')),
    ['x-organization-id', 'x-organization-scopes'],
    'the only identity header is the gateway’s',
  );
  t.same(Object.keys(out).filter((name) => name.includes('_')), [], 'no name with an underscore: CGI would fold it into a reserved one');
});

t.test('X-Forwarded-* are the gateway’s, never the client’s', async (t) => {
  const out = rewriteIdentityHeaders(hostile(), principal, 'req-9', { for: '6.6.6.6, 10.0.0.2', proto: 'https', host: 'api.example' }, null, BUILTIN_SCOPE_TABLE);
  t.equal(out['x-forwarded-for'], '6.6.6.6, 10.0.0.2');
  t.equal(out['x-forwarded-proto'], 'https');
  t.equal(out['x-forwarded-host'], 'api.example');
  t.notOk('forwarded' in out, 'Forwarded is not rewritten, only dropped');
  t.notOk('x-forwarded-prefix' in out);
  const noHost = rewriteIdentityHeaders({ 'x-forwarded-host': 'evil.example' }, principal, 'r', { for: '192.0.2.1', proto: 'http', host: undefined }, null, BUILTIN_SCOPE_TABLE);
  t.notOk('x-forwarded-host' in noHost, 'no Host received: no X-Forwarded-Host, and not the client’s');
});

t.test('identity headers are set even when the client sent none', async (t) => {
  const out = rewriteIdentityHeaders({ accept: '*/*' }, { orgId: 'org_2', via: 'jwt', credentialId: 'sess_1', scopes: ALL_SCOPES_GRANT }, 'r', direct, null, BUILTIN_SCOPE_TABLE);
  t.same(out, { accept: '*/*', 'x-forwarded-for': '192.0.2.10', 'x-forwarded-proto': 'http', 'x-forwarded-host': 'gateway.example', 'x-organization-id': 'org_2', 'x-organization-scopes': 'accounts:read accounts:write organization:read keys:read keys:write', 'x-request-id': 'r' });
});

t.test('removeHopByHopHeaders', async (t) => {
  const input: OutgoingHeaders = {
    'content-type': 'text/plain',
    'content-length': '5',
    'cache-control': 'no-store',
    connection: 'close, X-Upstream-Hop ,x-other-hop',
    'keep-alive': 'timeout=5',
    'x-upstream-hop': '1',
    'x-other-hop': '2',
    'proxy-connection': 'keep-alive',
    'transfer-encoding': 'chunked',
    upgrade: 'h2c',
    trailer: 'x-sum',
    te: 'trailers',
  };
  const before = { ...input };
  const out = removeHopByHopHeaders(input);
  t.not(out, input, 'a new object: the upstream answer\'s own headers are left as they were');
  t.same(input, before);
  t.same(out, { 'content-type': 'text/plain', 'content-length': '5', 'cache-control': 'no-store' });

  t.same(removeHopByHopHeaders({ 'keep-alive': 'timeout=5', etag: '"x"' }), { etag: '"x"' }, 'without connection');
  t.same(removeHopByHopHeaders({ connection: 'keep-alive', etag: '"x"' }), { etag: '"x"' });
  t.same(
    removeHopByHopHeaders({ connection: ['keep-alive', 'x-secret-hop'], 'x-secret-hop': '1', etag: '"e"' }),
    { etag: '"e"' },
    'repeated Connection headers (an array from undici) are all honoured',
  );
});

t.test('upstreamProblem: timeouts are 504, the rest 502', async (t) => {
  const timeouts = [{ statusCode: 504 }, { code: 'FST_REPLY_FROM_GATEWAY_TIMEOUT' }, { code: 'UND_ERR_CONNECT_TIMEOUT' }, { statusCode: 504, code: 'X' }];
  for (const error of timeouts) {
    const problem = upstreamProblem(error);
    t.type(problem, Problem);
    t.equal(problem.problem, 'upstreamTimeout', JSON.stringify(error));
    t.equal(problem.reason, 'upstream_timeout');
  }
  const unavailable = [{}, { statusCode: 502 }, { statusCode: 503 }, { statusCode: 500 }, { code: 'ECONNREFUSED' }, { code: 'FST_REPLY_FROM_BAD_GATEWAY', statusCode: 502 }, { code: 'ECONNRESET' }];
  for (const error of unavailable) {
    const problem = upstreamProblem(error);
    t.type(problem, Problem);
    t.equal(problem.problem, 'upstreamUnavailable', JSON.stringify(error));
    t.equal(problem.reason, 'upstream_unavailable');
  }
});
