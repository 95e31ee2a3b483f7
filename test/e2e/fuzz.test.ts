import t, { type Test } from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { createLocalJWKSet, jwtVerify, SignJWT, type JSONWebKeySet } from 'jose';
import { send, startGateway, UA } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw-http.js';
import type { RecordedRequest } from '../helpers/upstream.js';

/**
 * Two fuzz runs, each bounded in time (FUZZ_SECONDS, 15 by default): random request lines,
 * headers and bodies, sent as raw bytes. With invalid credentials: no 5xx, nothing
 * unauthenticated at the upstream, no secret echoed, the gateway still answers afterwards.
 * With a valid credential: every answer is either the upstream's, for a request that reached
 * it with exactly the gateway's identity and forwarding headers, or a 4xx; never a 5xx. A key
 * holding only accounts:read never gets anything but GET and HEAD to the upstream.
 */
const seconds = Number(process.env['FUZZ_SECONDS'] ?? 15);

/** Known methods, a lower-case one, and any upper-case token. */
const method = fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'get'), fc.stringMatching(/^[A-Z]{1,8}$/));

/** A well-formed assertion for another organization, signed with a key that is not the gateway's. */
const FORGED_ASSERTION = await new SignJWT({ name: 'Victim', email: 'victim@example.test', kind: 'api_key', scope: 'accounts:read accounts:write organization:read keys:read keys:write' })
  .setProtectedHeader({ alg: 'ES256' }).setSubject('org_victim').setIssuer('authgate').setIssuedAt().setExpirationTime('1h')
  .sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
/** The x-authgate-identity values forwarded requests carried; each is verified after the run. */
const assertionsSeen = new Set<string>();

/** The one origin allowed to call the API from a browser in these runs. */
const ORIGIN = 'https://app.example.test';
const CORS_HEADER_NAMES = ['Origin', 'Access-Control-Request-Method', 'Access-Control-Request-Headers'] as const;
const CORS_HEADER_VALUES = [ORIGIN, 'https://evil.example.test', 'null', 'GET', 'DELETE', 'authorization, x-organization-id, cookie'] as const;
/** A CORS preflight: OPTIONS with an Origin and an Access-Control-Request-Method. */
const isPreflight = (m: string, hs: readonly (readonly [string, string])[]) =>
  m === 'OPTIONS' && hs.some(([n]) => n.toLowerCase() === 'origin') && hs.some(([n]) => n.toLowerCase() === 'access-control-request-method');

/** Every scope, as x-organization-scopes carries them for a login token or a key created without scopes. */
const ALL_SCOPES = 'accounts:read accounts:write organization:read keys:read keys:write';

/** A gateway with an organization, its login token, an API key and a read-only key: the valid credentials the fuzz also sends. */
async function gatewayWithCredentials(t: Test) {
  // CORS and a rate limit (too high to refuse) on, so their code runs under the fuzz too.
  const gw = await startGateway(t, { env: { LOG_LEVEL: 'warn', AUTHGATE_CORS_ORIGINS: ORIGIN, AUTHGATE_RATE_LIMIT: '1000000/1s' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  const readOnly = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'fuzz read-only', scopes: ['accounts:read'] }),
  });
  if (readOnly.status !== 201) throw new Error(`create read-only key: ${readOnly.status} ${readOnly.body}`);
  const readOnlyKey = (readOnly.json() as { apiKey: string }).apiKey;
  return { gw, orgId: org.id, token, apiKey, readOnlyKey, port: Number(new URL(gw.publicUrl).port) };
}

t.test(`fuzz for ${seconds} s`, { timeout: (seconds + 60) * 1000 }, async (t) => {
  const { gw, token, apiKey, port } = await gatewayWithCredentials(t);
  const path = fc.oneof(
    fc.constantFrom('/auth/login', '/auth/logout', '/auth/api-key', '/auth/api-key/key_x', '/auth/api-key/key_x/roll', '/auth/sessions', '/auth/audit', '/accounts', '/accounts/x', '/organization/me', '/console/', '/console/app.js', '/console/..%2f', '*', 'http://x/accounts'),
    fc.stringMatching(/^\/[ -~]{0,40}$/).map((p) => p.replace(/[\s]/g, '')),
  );
  const headerName = fc.oneof(
    fc.constantFrom('Authorization', 'Content-Type', 'Content-Length', 'Transfer-Encoding', 'Content-Encoding', 'Connection', 'X-Organization-Id', 'X-Organization-Scopes', 'X-Forwarded-For', 'User-Agent', 'Expect', 'Host', ...CORS_HEADER_NAMES),
    fc.stringMatching(/^[A-Za-z-]{1,20}$/),
  );
  const headerValue = fc.oneof(
    fc.constantFrom(`Bearer ${apiKey}x`, `Bearer ${token.slice(0, -1)}`, 'application/json', 'text/plain', 'chunked', 'gzip', '0', '-1', '99999999999', 'close, authorization', '100-continue', ...CORS_HEADER_VALUES),
    fc.stringMatching(/^[ -~]{0,80}$/),
  );
  const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 });
  const body = fc.oneof(fc.constant(''), fc.json({ maxDepth: 4 }), fc.stringMatching(/^[\s\S]{0,300}$/), fc.constant('{"email":"a@b.c","password":"' + 'x'.repeat(2000) + '"}'));

  let runs = 0;
  await fc.assert(
    fc.asyncProperty(method, path, headers, body, fc.boolean(), async (m, p, hs, b, withUa) => {
      runs++;
      gw.upstream.requests.length = 0;
      const lines = [`${m} ${p} HTTP/1.1`, 'Host: gateway.test', 'Connection: close'];
      if (withUa) lines.push('User-Agent: fuzz');
      for (const [name, value] of hs) lines.push(`${name}: ${value}`);
      const res = await rawRequest(port, `${lines.join('\r\n')}\r\n\r\n${b}`, 2000);
      if (res.status >= 500) throw new Error(`${m} ${p} → ${res.status}`);
      if (gw.upstream.requests.length > 0) throw new Error(`${m} ${p} reached the upstream without a valid credential`);
      if (res.raw.includes(token) || res.raw.includes(apiKey)) throw new Error('a secret was echoed');
    }),
    { numRuns: 1_000_000, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false },
  );
  t.ok(runs > 50, `${runs} random requests without a 5xx, an unauthenticated upstream request or an echoed secret`);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${apiKey}` })).status, 200, 'the gateway still works');
});

t.test(`fuzz with a valid credential for ${seconds} s`, { timeout: (seconds + 60) * 1000 }, async (t) => {
  const { gw, orgId, token, apiKey, readOnlyKey, port } = await gatewayWithCredentials(t);
  const credentials = { 'api key': apiKey, 'login token': token, 'read-only key': readOnlyKey } as const;
  /** The x-organization-scopes each credential must bring to the upstream. */
  const scopesOf = new Map<string, string>([[apiKey, ALL_SCOPES], [token, ALL_SCOPES], [readOnlyKey, 'accounts:read']]);
  // The forwarded routes and their neighbours; never /auth (logout would end the token).
  const path = fc.oneof(
    fc.constantFrom('/accounts', '/accounts/', '/accounts/x', '/organization/me', '/organization/me/', '/organization', '/nope'),
    fc.stringMatching(/^[A-Za-z0-9._~%;=&?/-]{0,30}$/).map((rest) => `/accounts/${rest}`),
  );
  const headerName = fc.oneof(
    fc.constantFrom(
      'Authorization', 'Content-Type', 'Content-Length', 'Transfer-Encoding', 'Content-Encoding', 'Connection', 'Expect', 'Host', 'TE', 'Upgrade',
      'X-Organization-Id', 'x-organization-id', 'X-Organization-Role', 'x_organization_id', 'X-Organization_Id', 'X_ORGANIZATION_ID', 'x-organization_id',
      'X-Organization-Scopes', 'x-organization-scopes', 'x_organization_scopes',
      'X-Authgate-Identity', 'x-authgate-identity', 'x_authgate_identity', 'X-Authgate-Admin',
      'X-Forwarded-For', 'X-Forwarded-Proto', 'X-Forwarded-Host', 'x_forwarded_for', 'Forwarded', 'Proxy-Authorization', 'X-Request-Id',
      ...CORS_HEADER_NAMES,
    ),
    fc.stringMatching(/^[A-Za-z_-]{1,20}$/),
  );
  const headerValue = fc.oneof(
    fc.constantFrom(...CORS_HEADER_VALUES, `Bearer ${apiKey}`, `Bearer ${token}`, `Bearer ${readOnlyKey}`, 'org_victim', 'application/json', 'chunked', 'gzip', '0', '5', '99999999999', '100-continue', 'close, x-organization-id', 'close, x-organization-scopes', 'keys:write', ALL_SCOPES, FORGED_ASSERTION, 'close, x-authgate-identity', 'x-forwarded-for, x-request-id', 'for=6.6.6.6', '6.6.6.6'),
    fc.stringMatching(/^[ -~]{0,60}$/),
  );
  const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 });
  const body = fc.oneof(fc.constant(''), fc.json({ maxDepth: 3 }), fc.stringMatching(/^[ -~]{0,200}$/));

  let runs = 0;
  let forwarded = 0;
  let insufficientScope = 0;
  let preflights = 0;
  await fc.assert(
    fc.asyncProperty(method, path, headers, body, fc.constantFrom('api key', 'login token', 'read-only key'), fc.integer({ min: 0, max: 9 }), async (m0, p, hs0, b, kind, shape) => {
      // One in ten is made a preflight (OPTIONS, an Origin, a requested method), allowed origin or not.
      const m = shape === 0 ? 'OPTIONS' : m0;
      const hs = shape === 0 ? [...hs0, ['Origin', hs0.length % 2 === 0 ? ORIGIN : 'https://evil.example.test'] as [string, string], ['Access-Control-Request-Method', 'DELETE'] as [string, string]] : hs0;
      const n = ++runs;
      // A marker in the query picks this request's upstream record out of any late ones.
      const marker = `fz=${n}`;
      const target = `${p}${p.includes('?') ? '&' : '?'}${marker}`;
      const credential = credentials[kind];
      const lines = [`${m} ${target} HTTP/1.1`, 'Host: gateway.test', 'Connection: close', 'User-Agent: fuzz', `Authorization: Bearer ${credential}`];
      for (const [name, value] of hs) lines.push(`${name}: ${value}`);
      const answer = await rawRequest(port, `${lines.join('\r\n')}\r\n\r\n${b}`, 2000);
      // The final answer, after any interim `100 Continue`.
      const raw = answer.raw.replace(/^(?:HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
      const res = { raw, status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0) };
      const where = `${m} ${target} [${hs.map(([name]) => name).join(', ')}] → ${res.status}`;
      if (res.status >= 500) throw new Error(where);
      if (res.raw.includes(token) || res.raw.includes(apiKey)) throw new Error(`a secret was echoed: ${where}`);
      const seen = gw.upstream.requests.filter((r) => r.url.endsWith(marker) || r.url.includes(`${marker}&`));
      // The scopes the upstream may be told: the credential's, or, when the fuzz added an
      // Authorization header of its own, those of a credential the request carried.
      const sent = [credential, ...hs.filter(([name]) => name.toLowerCase() === 'authorization').map(([, value]) => value.replace(/^Bearer /, ''))];
      const scopes = [...new Set(sent.flatMap((c) => scopesOf.get(c) ?? []))];
      const onlyReadOnly = sent.every((c) => c === readOnlyKey || !scopesOf.has(c));
      for (const r of seen) {
        if (onlyReadOnly && r.method !== 'GET' && r.method !== 'HEAD') throw new Error(`${where}: a ${r.method} with a key holding only accounts:read reached the upstream`);
      }
      if (res.status === 0) return; // no answer in time (a Content-Length the body never fills): not a 5xx
      if (isPreflight(m, hs)) {
        // A preflight is the gateway's to answer, credential or not: never forwarded, never credentials allowed.
        if (seen.length > 0) throw new Error(`${where}: a preflight reached the upstream`);
        if (res.status === 204) {
          if (/\r\naccess-control-allow-credentials:/i.test(res.raw)) throw new Error(`${where}: a preflight allowed credentials`);
          preflights++;
          return;
        }
      }
      if (res.status < 400) {
        if (seen.length !== 1) throw new Error(`${where}: an answer below 400 that the upstream did not give (${seen.length} requests)`);
        checkForwarded(seen[0]!, orgId, scopes, where);
        if (!/\r\nratelimit-policy: "credential";q=1000000;w=1\r\n/i.test(res.raw)) throw new Error(`${where}: a forwarded answer without the credential's RateLimit-Policy`);
        forwarded++;
      } else if (res.status === 403 && /"code":1106\b/.test(res.raw)) {
        // insufficientScope: only for a key short of the route's scope, and nothing went upstream.
        if (!onlyReadOnly) throw new Error(`${where}: 1106 for a credential holding every scope`);
        if (seen.length > 0) throw new Error(`${where}: refused for its scope, yet it reached the upstream`);
        if (!/\r\nwww-authenticate: Bearer realm="authgate", error="insufficient_scope", scope="[a-z]+:[a-z]+"\r\n/i.test(res.raw)) throw new Error(`${where}: 1106 without its WWW-Authenticate`);
        insufficientScope++;
      } else {
        // A request whose body framing node refuses only after its head (`Transfer-Encoding:
        // chunked, gzip`) may already be on its way upstream when node answers 400 and drops
        // the connection; it was authenticated, and it must still carry only the gateway's
        // headers (the client address is `unknown` by then: the socket is gone).
        if (seen.length > 1) throw new Error(`${where}: refused, yet it reached the upstream ${seen.length} times`);
        if (seen.length === 1) checkForwarded(seen[0]!, orgId, scopes, where, true);
        const head = res.raw.slice(0, res.raw.indexOf('\r\n\r\n')).toLowerCase();
        // node refuses what it cannot parse (400, 431, and 417 for an Expect other than
        // 100-continue) before any request exists; every answer of the gateway is a problem.
        const fromGateway = head.includes('\r\nx-request-id:');
        if (fromGateway && !head.includes('content-type: application/problem+json')) throw new Error(`${where}: a 4xx without a problem body`);
        if (!fromGateway && ![400, 417, 431].includes(res.status)) throw new Error(`${where}: an unexpected answer from node itself`);
      }
    }),
    { numRuns: 1_000_000, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false },
  );
  t.ok(runs > 50, `${runs} random requests with a valid credential: every answer forwarded correctly or a 4xx, never a 5xx`);
  t.ok(forwarded > 10, `${forwarded} of them reached the upstream, each with only the gateway's identity and forwarding headers`);
  t.ok(insufficientScope > 10, `${insufficientScope} of them refused 403 1106 for the read-only key's missing scope, none forwarded`);
  t.ok(preflights > 10, `${preflights} CORS preflights answered 204 by the gateway, none forwarded, none allowing credentials`);
  // Every identity assertion the upstream saw is the gateway's: signed with its key, for this organization.
  const jwks = createLocalJWKSet((await send(`${gw.opsUrl}/.well-known/jwks.json`)).json() as JSONWebKeySet);
  t.ok(assertionsSeen.size >= 1, `${assertionsSeen.size} distinct assertions seen upstream`);
  for (const assertion of assertionsSeen) {
    const { payload } = await jwtVerify(assertion, jwks, { issuer: 'authgate', audience: new URL(gw.upstream.url).origin });
    if (payload.sub !== orgId) t.fail(`an assertion for ${String(payload.sub)}`);
  }
  t.notOk(assertionsSeen.has(FORGED_ASSERTION), 'never the forged one');
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${token}` })).status, 200, 'the gateway still works');
});

/** What the upstream may see of a forwarded request: the gateway's identity and forwarding headers, no client's. */
function checkForwarded(seen: RecordedRequest, orgId: string, scopes: readonly string[], where: string, clientGone = false): void {
  const names = seen.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
  const values = (name: string) => seen.rawHeaders.filter((_, i) => i % 2 === 1 && seen.rawHeaders[i - 1]!.toLowerCase() === name);
  const fail = (what: string) => {
    throw new Error(`${where}: ${what}; upstream saw ${JSON.stringify(seen.rawHeaders)}`);
  };
  if (JSON.stringify(values('x-organization-id')) !== JSON.stringify([orgId])) fail('not exactly one x-organization-id, the right one');
  const scopeValues = values('x-organization-scopes');
  if (scopeValues.length !== 1 || !scopes.includes(scopeValues[0]!)) fail(`not exactly one x-organization-scopes, the credential's (${scopes.join(' | ')})`);
  if (names.some((name) => name.startsWith('x-organization-') && name !== 'x-organization-id' && name !== 'x-organization-scopes')) fail('a client x-organization-* header');
  if (names.some((name) => name.startsWith('x-authgate-') && name !== 'x-authgate-identity')) fail('a client x-authgate-* header');
  const assertion = values('x-authgate-identity');
  if (assertion.length !== 1) fail('not exactly one x-authgate-identity');
  assertionsSeen.add(assertion[0]!); // verified against the JWKS at the end of the run
  if (names.some((name) => name.includes('_'))) fail('a header name with an underscore');
  for (const name of ['authorization', 'proxy-authorization', 'forwarded', 'expect']) if (names.includes(name)) fail(`${name} was forwarded`);
  const xff = JSON.stringify(values('x-forwarded-for'));
  if (xff !== JSON.stringify(['127.0.0.1']) && !(clientGone && xff === JSON.stringify(['unknown']))) fail('X-Forwarded-For is not the gateway\'s');
  if (JSON.stringify(values('x-forwarded-proto')) !== JSON.stringify(['http'])) fail('X-Forwarded-Proto is not the gateway\'s');
  const host = values('x-forwarded-host');
  if (host.length > 1 || (host.length === 1 && host[0] !== 'gateway.test')) fail('X-Forwarded-Host is not the Host received');
}
