import t from 'tap';
import { parseApiKey } from '../../src/credentials/api-keys.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { ADMIN_TOKEN, UA, send, startGateway } from '../helpers/gateway.js';

const json = { 'content-type': 'application/json' };

t.test('User-Agent guard: every path, before anything else', async (t) => {
  const gw = await startGateway(t);
  const cases: Array<[string, string, Record<string, string>]> = [
    ['POST', '/auth/login', json],
    ['GET', '/accounts', {}],
    ['GET', '/organization/me', { authorization: 'Bearer whatever' }],
    ['GET', '/no/such/path', {}],
    ['POST', '/auth/api-key', {}],
    ['POST', '/auth/api-key/leaked', json],
    ['POST', '/auth/api-key/key_x/roll', {}],
  ];
  for (const [method, path, headers] of cases) {
    for (const ua of [undefined, '', '   ']) {
      const res = await send(gw.publicUrl + path, { method, headers: ua === undefined ? headers : { ...headers, 'user-agent': ua } });
      t.equal(res.status, 403, `${method} ${path} ua=${JSON.stringify(ua)}`);
      t.match(res.headers['content-type'], /^application\/problem\+json/);
      t.equal(res.json().code, 1010);
    }
  }
  t.equal(gw.upstream.requests.length, 0, 'nothing reached the upstream');
  const ok = await send(`${gw.publicUrl}/no/such/path`, { headers: { 'user-agent': 'x' } });
  t.equal(ok.status, 404, 'any non-empty value passes the guard');
});

t.test('login: success, failures, bad input', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization({ email: 'Mixed.Case@Example.TEST' });
  const login = (body: string, headers: Record<string, string> = json) =>
    send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, ...headers }, body });

  const ok = await login(JSON.stringify({ email: '  mixed.case@example.test ', password: org.password }));
  t.equal(ok.status, 200, 'e-mail is trimmed and compared case-insensitively');
  t.type(ok.json().token, 'string');
  t.same(Object.keys(ok.json()), ['token']);
  t.equal(ok.headers['cache-control'], 'no-store');

  const wrongPassword = await login(JSON.stringify({ email: org.email, password: 'wrong-password-123' }));
  const unknownEmail = await login(JSON.stringify({ email: 'nobody@example.test', password: 'wrong-password-123' }));
  t.equal(wrongPassword.status, 401);
  t.equal(unknownEmail.status, 401);
  t.same(wrongPassword.json(), unknownEmail.json(), 'same body for unknown e-mail and wrong password');
  t.ok(wrongPassword.headers['www-authenticate']);

  const badInputs: Array<[string, string, Record<string, string>?]> = [
    ['malformed JSON', '{"email": "a@b.c", "password": '],
    ['wrong types', JSON.stringify({ email: 42, password: true })],
    ['missing password', JSON.stringify({ email: org.email })],
    ['missing email', JSON.stringify({ password: 'x' })],
    ['array body', JSON.stringify([org.email, org.password])],
    ['string body', JSON.stringify('hello')],
    ['null body', 'null'],
    ['empty body', ''],
    ['extra property', JSON.stringify({ email: org.email, password: org.password, admin: true })],
    ['__proto__ key', `{"email":"${org.email}","password":"${org.password}","__proto__":{"admin":true}}`],
    ['constructor key', `{"email":"${org.email}","password":"${org.password}","constructor":{"prototype":{"admin":true}}}`],
    ['deep nesting', `{"email":${'['.repeat(20000)}${']'.repeat(20000)},"password":"x"}`],
  ];
  for (const [name, body] of badInputs) {
    const res = await login(body);
    t.equal(res.status, 400, name);
    t.match(res.headers['content-type'], /^application\/problem\+json/, name);
    t.type(res.json().code, 'number', name);
  }
  t.equal(({} as Record<string, unknown>)['admin'], undefined, 'no prototype was polluted');

  const textPlain = await login(JSON.stringify({ email: org.email, password: org.password }), { 'content-type': 'text/plain' });
  t.equal(textPlain.status, 415, 'a content type other than JSON');
  t.equal(textPlain.json().code, 1202);
  const form = await login('email=a&password=b', { 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(form.status, 415);
  const gzip = await login(JSON.stringify({ email: org.email, password: org.password }), { ...json, 'content-encoding': 'gzip' });
  t.equal(gzip.status, 415, 'compressed bodies are refused, not inflated');
  const big = await login(JSON.stringify({ email: org.email, password: 'x'.repeat(70 * 1024) }));
  t.equal(big.status, 413, 'a body over 64 KiB');
  t.equal(big.json().code, 1203);
});

t.test('the token is an opaque JWT with the standard claims', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization({ name: 'Opaque Org Name' });
  const token = await gw.login(org.email, org.password);
  const [header, payload, signature] = token.split('.');
  t.ok(signature);
  t.same(JSON.parse(Buffer.from(header!, 'base64url').toString()).alg, 'HS256');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
  t.same(Object.keys(claims).sort(), ['aud', 'exp', 'iat', 'iss', 'jti', 'sub']);
  // iat is rounded down and exp up (a token lives at least its TTL), so the difference may be 3601.
  t.ok([3600, 3601].includes((claims['exp'] as number) - (claims['iat'] as number)), '1 hour by default');
  const decoded = Buffer.from(payload!, 'base64url').toString();
  for (const secret of [org.id, org.email, 'Opaque Org Name', org.id.replace('org_', '')]) {
    t.notOk(decoded.includes(secret), `token does not carry ${secret}`);
  }
});

t.test('API keys: create, list, use, revoke; JWT-only creation', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const created = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(created.status, 201);
  t.equal(created.headers['cache-control'], 'no-store');
  const { id, apiKey } = created.json() as { id: string; apiKey: string };
  t.match(apiKey, new RegExp(`^agk_test_${shardTagOf(org.id)}_[0-9A-Za-z]{36}$`), 'sandbox key: prefix, its organization\'s shard tag, random, checksum');
  t.same(Object.keys(created.json()).sort(), ['apiKey', 'createdAt', 'createdBy', 'expiresAt', 'id', 'name', 'quota', 'rateLimit', 'scopes']);
  t.same(created.json().scopes, ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'], 'without scopes, a key holds all five');

  const withKey = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${apiKey}` } });
  t.equal(withKey.status, 403, 'an API key cannot create API keys');
  t.equal(withKey.json().code, 1103);
  t.match(withKey.json().detail, /login token/);

  const listed = await gw.get('/auth/api-key', { authorization: `Bearer ${apiKey}` });
  t.equal(listed.status, 200);
  const keys = listed.json().keys as Array<Record<string, string>>;
  t.equal(keys.length, 1);
  t.equal(listed.json().nextCursor, null, 'one page');
  t.same(Object.keys(keys[0]!).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'quota', 'rateLimit', 'scopes']);
  t.same(keys[0]!.scopes, ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'], 'listed with all five scopes');
  const lastUsedAt = keys[0]!.lastUsedAt as string | null;
  t.ok(lastUsedAt === null || (typeof lastUsedAt === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(lastUsedAt)), `lastUsedAt null or a date-time (${lastUsedAt})`);
  t.equal(keys[0]!.id, id);
  t.ok(apiKey.startsWith(keys[0]!.prefix!) && keys[0]!.prefix!.length < 20, 'a short prefix for recognition');
  t.notOk(listed.body.includes(apiKey), 'the secret is never listed');
  const parsed = parseApiKey(apiKey);
  t.ok(parsed.ok, 'the key parses');
  t.notOk(parsed.ok && (listed.body.includes(parsed.hash) || listed.body.includes(parsed.hash.slice(parsed.hash.indexOf('.') + 1))), 'nor its lookup hash');
  t.notOk(/[0-9a-f]{64}/.test(listed.body), 'nor any full sha256');

  t.equal((await gw.get('/accounts', { authorization: `Bearer ${apiKey}` })).status, 200, 'the key works');
  const revoked = await send(`${gw.publicUrl}/auth/api-key/${id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(revoked.status, 204);
  const after = await gw.get('/accounts', { authorization: `Bearer ${apiKey}` });
  t.equal(after.status, 401, 'revoked at once');
  t.match(after.headers['www-authenticate'], /error="invalid_token"/);
  const again = await send(`${gw.publicUrl}/auth/api-key/${id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(again.status, 404, 'deleting twice');
  t.equal(again.json().code, 1301);
});

t.test('two organizations are isolated', async (t) => {
  const gw = await startGateway(t);
  const a = await gw.createOrganization();
  const b = await gw.createOrganization();
  const tokenA = await gw.login(a.email, a.password);
  const tokenB = await gw.login(b.email, b.password);
  const keyA = await gw.createApiKey(tokenA);
  const keyB = await gw.createApiKey(tokenB);

  const listB = await gw.get('/auth/api-key', { authorization: `Bearer ${tokenB}` });
  t.same((listB.json().keys as Array<{ id: string }>).map((k) => k.id), [keyB.id], 'B sees only its own key');
  const steal = await send(`${gw.publicUrl}/auth/api-key/${keyA.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${tokenB}` } });
  t.equal(steal.status, 404, "another organization's key is not found");
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${keyA.apiKey}` })).status, 200, "A's key still works");

  gw.upstream.requests.length = 0;
  await gw.get('/accounts', { authorization: `Bearer ${keyA.apiKey}` });
  await gw.get('/organization/me', { authorization: `Bearer ${tokenB}` });
  t.same(gw.upstream.requests.map((r) => r.headers['x-organization-id']), [a.id, b.id]);
});

t.test('logout ends the token; only a JWT can log out', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  const withKey = await send(`${gw.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${key.apiKey}` } });
  t.equal(withKey.status, 403);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${token}` })).status, 200);
  const out = await send(`${gw.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(out.status, 204);
  const after = await gw.get('/accounts', { authorization: `Bearer ${token}` });
  t.equal(after.status, 401, 'the token is 401 from then on');
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'keys outlive the login that made them');
  const second = await gw.login(org.email, org.password);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${second}` })).status, 200, 'another login is unaffected');
});

t.test('expired tokens are 401', async (t) => {
  let now = Date.now();
  const gw = await startGateway(t, { deps: { now: () => now } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${token}` })).status, 200);
  now += 3601 * 1000;
  const res = await gw.get('/accounts', { authorization: `Bearer ${token}` });
  t.equal(res.status, 401, 'after an hour, even though it was cached');
  t.match(res.json().detail, /expired/);
});

t.test('forwarding: path, query, body, headers, status both ways', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  const auth = { authorization: `Bearer ${apiKey}` };

  const res = await gw.get('/accounts?limit=5&cursor=a%2Fb&x=1&x=2', {
    ...auth,
    'x-organization-id': 'org_forged',
    'X-Organization-Role': 'admin',
    'x-forwarded-for': '6.6.6.6',
    'x-custom': 'kept',
    connection: 'x-organization-id, x-custom',
  });
  t.equal(res.status, 200);
  t.equal(res.headers['x-upstream'], 'recorded', 'upstream headers come back');
  t.notOk(res.headers['x-hop'], 'headers the upstream named in Connection do not');
  t.notOk(res.headers['keep-alive'] === 'timeout=5', "the upstream's keep-alive is not passed back");
  const seen = gw.upstream.requests.at(-1)!;
  t.equal(seen.url, '/accounts?limit=5&cursor=a%2Fb&x=1&x=2', 'path and query untouched');
  t.equal(seen.headers['x-organization-id'], org.id, 'the organization is injected');
  t.same(seen.rawHeaders.filter((h) => h.toLowerCase().startsWith('x-organization-')).map((h) => h.toLowerCase()).sort(), ['x-organization-id', 'x-organization-scopes'], 'only the gateway-set identity headers');
  t.equal(seen.headers['x-organization-scopes'], 'accounts:read accounts:write organization:read keys:read keys:write', 'the key\'s scopes: all five for a default key');
  t.notOk(seen.headers['x-organization-role']);
  t.notOk(seen.headers['authorization'], 'the credential is not forwarded');
  t.equal(seen.headers['x-forwarded-for'], '127.0.0.1', "an untrusted client's X-Forwarded-For is replaced by the gateway's");
  t.equal(seen.headers['x-forwarded-proto'], 'http');
  t.notOk(seen.headers['x-custom'], 'a header named in Connection is hop-by-hop');
  t.ok(seen.headers['x-request-id'], 'the request id goes upstream');
  t.equal(seen.headers['x-request-id'], res.headers['x-request-id']);

  const body = JSON.stringify({ name: 'new', data: 'y'.repeat(200_000) });
  const post = await send(`${gw.publicUrl}/accounts/created`, { method: 'POST', headers: { ...UA, ...auth, ...json }, body });
  t.equal(post.status, 201, 'upstream status passed back');
  t.equal(post.json().bodyLength, body.length, 'bodies stream through, beyond the auth routes limit');
  t.equal(gw.upstream.requests.at(-1)!.body, body);

  for (const method of ['PUT', 'PATCH', 'DELETE']) {
    const r = await send(`${gw.publicUrl}/accounts/acc_1`, { method, headers: { ...UA, ...auth } });
    t.equal(r.status, 200, `${method} below /accounts`);
    t.equal(gw.upstream.requests.at(-1)!.method, method);
  }
  const me = await gw.get('/organization/me', { authorization: `Bearer ${token}` });
  t.equal(me.status, 200);
  t.equal(me.json().orgId, org.id);
  const postMe = await send(`${gw.publicUrl}/organization/me`, { method: 'POST', headers: { ...UA, ...auth } });
  t.equal(postMe.status, 405, 'only GET /organization/me is forwarded');
  t.equal(postMe.headers['allow'], 'GET, HEAD');
  t.equal((await gw.get('/organization/me/extra', auth)).status, 404, 'nothing below /organization/me');
  t.equal((await gw.get('/organization', auth)).status, 404);
});

t.test('credential failures are 401 with WWW-Authenticate; nothing reaches the upstream', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  gw.upstream.requests.length = 0;
  const lastChar = apiKey.at(-1) === 'a' ? 'b' : 'a';
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['missing', {}, /^Bearer realm="authgate"$/],
    ['empty', { authorization: '' }, /^Bearer realm="authgate"$/],
    ['basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }, /^Bearer realm="authgate"$/],
    ['bearer without token', { authorization: 'Bearer' }, /invalid_request/],
    ['two tokens', { authorization: `Bearer ${apiKey} ${apiKey}` }, /invalid_request/],
    ['unknown key', { authorization: `Bearer agk_test_${shardTagOf(org.id)}_${'A'.repeat(36)}` }, /invalid_token/],
    ['key of the first format', { authorization: `Bearer agk_test_${'A'.repeat(36)}` }, /invalid_token/],
    ['mistyped key', { authorization: `Bearer ${apiKey.slice(0, -1)}${lastChar}` }, /invalid_token/],
    ['truncated key', { authorization: `Bearer ${apiKey.slice(0, -3)}` }, /invalid_token/],
    ['garbage token', { authorization: 'Bearer not.a.jwt' }, /invalid_token/],
    ['tampered JWT', { authorization: `Bearer ${token.slice(0, -2)}xx` }, /invalid_token/],
  ];
  for (const [name, headers, challenge] of cases) {
    for (const path of ['/accounts', '/organization/me', '/accounts/x', '/auth/api-key']) {
      const res = await gw.get(path, headers);
      t.equal(res.status, 401, `${name} on ${path}`);
      t.match(res.headers['www-authenticate'], challenge, `${name}: challenge`);
      t.match(res.headers['content-type'], /^application\/problem\+json/);
      t.ok([1101, 1102].includes(res.json().code), `${name}: code`);
    }
  }
  t.equal(gw.upstream.requests.length, 0, 'nothing unauthenticated reached the upstream');
  const bearerLower = await gw.get('/accounts', { authorization: `bearer ${apiKey}` });
  t.equal(bearerLower.status, 200, 'the scheme is case-insensitive');
});

t.test('unknown paths are 404 problems; upstream failures are 502 and 504', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_UPSTREAM_TIMEOUT_MS: '300' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  // '/ACCOUNTS' is /accounts's since issue 45 (e2e/path-readings.test.ts): a spelling, not an unknown path.
  for (const path of ['/', '/admin/organizations', '/metrics', '/livez', '/auth', '/accountsx']) {
    const res = await gw.get(path, { authorization: `Bearer ${token}` });
    t.equal(res.status, 404, `${path} is not public`);
    t.equal(res.json().code, 1204);
  }
  // Held until the gateway has answered: a timeout on a loaded machine, however late its timer.
  const release = gw.upstream.holdAnswers();
  const slow = await gw.get('/accounts', { authorization: `Bearer ${token}` });
  release();
  t.equal(slow.status, 504, 'too slow');
  t.equal(slow.json().code, 1504);
  await gw.upstream.close();
  const down = await gw.get('/accounts', { authorization: `Bearer ${token}` });
  t.equal(down.status, 502, 'unreachable');
  t.equal(down.json().code, 1502);
  t.match(down.headers['content-type'], /^application\/problem\+json/);
});

t.test('admin API on the ops port only, behind the admin token', async (t) => {
  const gw = await startGateway(t);
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, ...json };
  const create = (body: unknown, headers: Record<string, string> = admin) =>
    send(`${gw.opsUrl}/admin/organizations`, { method: 'POST', headers, body: JSON.stringify(body) });

  t.equal((await create({ name: 'A', email: 'a@example.test', password: 'long-enough-pass' }, json)).status, 401, 'no token');
  t.equal((await create({ name: 'A', email: 'a@example.test', password: 'long-enough-pass' }, { ...json, authorization: 'Bearer wrong' })).status, 401, 'wrong token');
  const created = await create({ name: 'A', email: ' A@Example.test', password: 'long-enough-pass' });
  t.equal(created.status, 201);
  t.same(Object.keys(created.json()).sort(), ['createdAt', 'effectiveKeyLimit', 'effectiveRateLimit', 'email', 'id', 'keyLimit', 'name', 'rateLimit']);
  t.equal(created.json().email, 'a@example.test');
  t.notOk(created.body.includes('long-enough-pass'));
  t.equal((await create({ name: 'B', email: 'a@EXAMPLE.test', password: 'long-enough-pass' })).status, 409, 'duplicate e-mail');
  t.equal((await create({ name: 'C', email: 'c@example.test', password: 'short' })).status, 400, 'password under 15');
  t.equal((await create({ name: 'C', email: 'not-an-email', password: 'long-enough-pass' })).status, 400);
  t.equal((await create({ email: 'c@example.test', password: 'long-enough-pass' })).status, 400);

  const id = created.json().id as string;
  const got = await send(`${gw.opsUrl}/admin/organizations/${id}`, { headers: admin });
  t.equal(got.status, 200);
  t.equal(got.json().id, id);
  t.equal((await send(`${gw.opsUrl}/admin/organizations/org_nope`, { headers: admin })).status, 404);

  const token = await gw.login('a@example.test', 'long-enough-pass');
  const key = await gw.createApiKey(token);
  t.equal((await send(`${gw.opsUrl}/admin/organizations/${id}`, { method: 'DELETE', headers: admin })).status, 204);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${token}` })).status, 401, 'its tokens are 401');
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 401, 'its keys are 401');
  t.equal((await send(`${gw.opsUrl}/admin/organizations/${id}`, { headers: admin })).status, 404);
  t.equal((await send(`${gw.opsUrl}/admin/organizations/${id}`, { method: 'DELETE', headers: admin })).status, 404);

  const publicAdmin = await send(`${gw.publicUrl}/admin/organizations`, { method: 'POST', headers: { ...UA, ...admin }, body: '{}' });
  t.equal(publicAdmin.status, 404, 'the admin API is not on the public port');
});

t.test('OpenAPI documents are served on the ops port', async (t) => {
  const gw = await startGateway(t);
  const doc = await send(`${gw.opsUrl}/openapi.json`);
  t.equal(doc.status, 200);
  t.equal(doc.json().openapi, '3.1.0');
  t.ok(doc.json().paths['/auth/login'].post.requestBody, 'login body documented');
  t.ok(doc.json().paths['/auth/api-key'].get);
  t.ok(doc.json().paths['/auth/api-key/{id}/roll'].post, 'the roll route documented');
  for (const [path, method] of [['/auth/api-key', 'get'], ['/auth/api-key/{id}', 'get'], ['/auth/api-key/{id}', 'patch'], ['/auth/api-key/{id}', 'delete']] as const) {
    t.ok(doc.json().paths[path][method].responses['403'], `${method.toUpperCase()} ${path}: the 403 insufficientScope answer documented`);
  }
  const admin = await send(`${gw.opsUrl}/openapi/admin.json`);
  t.ok(admin.json().paths['/admin/organizations'].post);
});

t.test('no password, token or key in any log line', async (t) => {
  const gw = await startGateway(t, { env: { LOG_LEVEL: 'trace' } });
  const org = await gw.createOrganization({ password: 'a-very-secret-password-42' });
  const token = await gw.login(org.email, 'a-very-secret-password-42');
  const { apiKey, id } = await gw.createApiKey(token);
  await gw.get('/accounts', { authorization: `Bearer ${apiKey}` });
  await gw.get('/accounts', { authorization: `Bearer ${token}` });
  await gw.get('/accounts', { authorization: `Bearer ${apiKey}x` });
  await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, ...json }, body: JSON.stringify({ email: org.email, password: 'a-very-secret-password-43' }) });
  await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, ...json }, body: `{"email":"${org.email}","password":"a-very-secret-password-44"` });
  await gw.upstream.close();
  await gw.get('/accounts', { authorization: `Bearer ${apiKey}` });
  const text = gw.logs.text();
  t.ok(gw.logs.lines.length > 5, 'there were log lines');
  for (const secret of ['a-very-secret-password', token, token.split('.')[2]!, apiKey, apiKey.slice(9, 30), ADMIN_TOKEN]) {
    t.notOk(text.includes(secret), 'a secret is not in the log');
  }
  const requestLines = gw.logs.records().filter((r) => r['msg'] === 'request');
  const keyLine = requestLines.find((r) => r['keyId'] === id);
  t.ok(keyLine, 'the key id (not the key) is logged');
  t.equal(keyLine?.['orgId'], org.id);
  t.equal(keyLine?.['credentialKind'], 'api_key');
});
