/**
 * Bodies and framing (issue 26), as raw bytes on a socket against a real gateway and a real
 * upstream on loopback:
 * - `Expect: 100-continue` is answered with 100 only once the request is admitted: every refusal
 *   that can be made from the head is the final answer, without 100, on both ports;
 * - a refused request whose body was not read is not read in full: past a small drain bound
 *   (64 KiB declared, or any chunked body) the answer says `Connection: close` and the gateway
 *   closes, on both ports and on the fast lane;
 * - two `Host` headers, none (HTTP/1.1), or one that is no host are refused as problems.
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { LEAK_REPORTS } from '../../src/routes/leaked-keys.js';
import { ADMIN_TOKEN, eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { finalAnswer, hasFinalAnswer, openRaw } from '../helpers/raw-http.js';

const portOf = (url: string) => Number(new URL(url).port);
const MiB = 1024 * 1024;

/** A request head as a client writes it (keep-alive: no Connection header), each header as given. */
function head(method: string, target: string, headers: Array<[string, string]>, version = '1.1'): string {
  return `${method} ${target} HTTP/${version}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

const HOST: [string, string] = ['Host', 'gateway.test'];
const UA: [string, string] = ['User-Agent', 'framing-test/1'];

async function keyed(gw: StartedGateway, scopes?: string[]): Promise<{ token: string; apiKey: string }> {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  if (scopes === undefined) return { token, apiKey: (await gw.createApiKey(token)).apiKey };
  const res = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { 'user-agent': 'framing-test/1', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scopes }),
  });
  return { token, apiKey: (res.json() as { apiKey: string }).apiKey };
}

type Answer = ReturnType<typeof finalAnswer>;

function assertProblem(t: Test, answer: Answer, status: number, code: number, what: string): void {
  t.equal(answer.status, status, `${what}: ${status}`);
  t.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/, `${what}: a problem body`);
  t.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, `${what}: an x-request-id`);
  let body: { code?: number } = {};
  try {
    body = JSON.parse(answer.body) as typeof body;
  } catch {
    t.fail(`${what}: the body is JSON (${answer.body.slice(0, 80)})`);
  }
  t.equal(body.code, code, `${what}: code ${code}`);
}

/**
 * Sends a head with `Expect: 100-continue` and waits, as a client honouring it does, for either
 * a 100 (then sends `body`) or a final answer. Returns that answer and whether the server closed
 * the connection after it.
 */
async function expecting(port: number, text: string, body: Buffer = Buffer.alloc(0)): Promise<{ answer: Answer; closed: boolean }> {
  const connection = await openRaw(port);
  connection.write(text);
  await connection.until((raw) => /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.test(raw) || hasFinalAnswer(raw), 20_000);
  if (/^HTTP\/1\.1 100 /.test(connection.received())) connection.write(body);
  await connection.until(hasFinalAnswer, 20_000);
  const answer = finalAnswer(connection.received());
  // A refusal without 100 closes (node: the client may send the body after all); an admitted one stays.
  const closed = answer.after100 ? false : await connection.closedWithin(10_000);
  connection.destroy();
  return { answer, closed };
}

t.test('Expect: 100-continue: every refusal the head decides is the final answer, without 100', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_RATE_LIMIT: '1/1h' } });
  const port = portOf(gw.publicUrl);
  const ops = portOf(gw.opsUrl);
  const { apiKey } = await keyed(gw);
  const readOnly = (await keyed(gw, ['accounts:read'])).apiKey;
  const big = String(100 * MiB);
  const json: [string, string] = ['Content-Type', 'application/json'];
  const expect: [string, string] = ['Expect', '100-continue'];

  // The rate limit's one request for this key: admitted, 100, the body forwarded whole.
  const sent = Buffer.from(Array.from({ length: 256 * 1024 }, (_, i) => 97 + ((i * 31) % 26)));
  const admitted = await expecting(port, head('POST', '/accounts', [HOST, UA, ['Authorization', `Bearer ${apiKey}`], ['Content-Length', String(sent.length)], ['Content-Type', 'application/octet-stream'], expect]), sent);
  t.ok(admitted.answer.after100, 'an admitted request gets 100 Continue');
  t.equal(admitted.answer.status, 200);
  t.equal(gw.upstream.requests.length, 1);
  t.equal(createHash('sha256').update(gw.upstream.requests[0]!.body, 'latin1').digest('hex'), createHash('sha256').update(sent).digest('hex'), 'the upstream got the body whole');

  gw.upstream.requests.length = 0;

  const refusals: Array<[string, number, string, number, number]> = [
    ['no credential', port, head('POST', '/accounts', [HOST, UA, json, ['Content-Length', big], expect]), 401, 1101],
    ['a key without the scope', port, head('POST', '/accounts', [HOST, UA, json, ['Authorization', `Bearer ${readOnly}`], ['Content-Length', big], expect]), 403, 1106],
    ['a key over its rate limit', port, head('POST', '/accounts', [HOST, UA, json, ['Authorization', `Bearer ${apiKey}`], ['Content-Length', big], expect]), 429, 1110],
    ['no User-Agent', port, head('POST', '/accounts', [HOST, json, ['Authorization', `Bearer ${apiKey}`], ['Content-Length', big], expect]), 403, 1010],
    ['/auth/login over its body limit', port, head('POST', '/auth/login', [HOST, UA, json, ['Content-Length', big], expect]), 413, 1203],
    ['/auth/api-key/leaked over its body limit', port, head('POST', '/auth/api-key/leaked', [HOST, UA, json, ['Content-Length', String(LEAK_REPORTS.bodyLimitBytes + 1)], expect]), 413, 1203],
    ['an unknown route', port, head('POST', '/nowhere', [HOST, UA, json, ['Content-Length', big], expect]), 404, 1204],
    ['a method the path does not take', port, head('PUT', '/auth/login', [HOST, UA, json, ['Content-Length', big], expect]), 405, 1205],
    ['two Host headers', port, head('POST', '/accounts', [HOST, ['Host', 'other.test'], UA, json, ['Authorization', `Bearer ${apiKey}`], ['Content-Length', big], expect]), 400, 1209],
    ['ops: no admin token', ops, head('POST', '/admin/organizations', [HOST, json, ['Content-Length', big], expect]), 401, 1107],
    ['ops: an unknown route', ops, head('POST', '/nowhere', [HOST, json, ['Content-Length', big], expect]), 404, 1204],
  ];
  // The leak-report limit per address, spent (the refused report above counted: the limit is
  // the head's, every report counts): then a report is refused from its head too.
  const spend = async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LEAK_REPORTS.perAddress; i++) {
      const res = await send(`${gw.publicUrl}/auth/api-key/leaked`, { method: 'POST', headers: { 'user-agent': 'scanner/1', 'content-type': 'application/json' }, body: '{"keys":["agk_test_nothing"]}' });
      statuses.push(res.status);
    }
    t.same(statuses, [...Array(LEAK_REPORTS.perAddress - 1).fill(202), 429], 'the limit spent');
  };
  refusals.push(['/auth/api-key/leaked over the per-address limit', port, head('POST', '/auth/api-key/leaked', [HOST, UA, json, ['Content-Length', '30'], expect]), 429, 1109]);
  for (const [what, on, text, status, code] of refusals) {
    if (code === 1109) await spend();
    const { answer, closed } = await expecting(on, text, Buffer.from('{"keys":["agk_test_nothing"]}'));
    t.notOk(answer.after100, `${what}: no 100 Continue before the refusal`);
    assertProblem(t, answer, status, code, what);
    t.equal(answer.headers['connection'], 'close', `${what}: Connection: close (the client may still send the body)`);
    t.ok(closed, `${what}: and the gateway closes`);
  }
  t.equal(gw.upstream.requests.length, 0, 'nothing refused reached the upstream');

  // The gateway's own routes read an admitted body after 100: a login, an organization.
  const org = await gw.createOrganization();
  const login = Buffer.from(JSON.stringify({ email: org.email, password: org.password }));
  const signedIn = await expecting(port, head('POST', '/auth/login', [HOST, UA, json, ['Content-Length', String(login.length)], expect]), login);
  t.ok(signedIn.answer.after100, '/auth/login: 100 Continue');
  t.equal(signedIn.answer.status, 200, '/auth/login: signed in');
  const created = Buffer.from(JSON.stringify({ name: 'Expecting', email: `expecting-${process.pid}@example.test`, password: 'correct horse battery staple' }));
  const made = await expecting(ops, head('POST', '/admin/organizations', [HOST, json, ['Authorization', `Bearer ${ADMIN_TOKEN}`], ['Content-Length', String(created.length)], expect]), created);
  t.ok(made.answer.after100, 'ops: 100 Continue for the admin');
  t.equal(made.answer.status, 201, 'ops: created');

  // Any other expectation keeps its 417 (1208), on both ports.
  for (const on of [port, ops]) {
    const { answer } = await expecting(on, head('POST', '/accounts', [HOST, UA, json, ['Content-Length', '2'], ['Expect', 'something-else']]));
    assertProblem(t, answer, 417, 1208, 'Expect: something-else');
  }
});

/**
 * Writes a head and then body bytes (as a client that sends without waiting does), up to `bytes`
 * or until the server closes; returns the final answer and whether the server closed.
 */
async function refusedWhileSending(port: number, text: string, chunk: Buffer, times: number): Promise<{ answer: Answer; closed: boolean }> {
  const connection = await openRaw(port);
  connection.write(text);
  for (let i = 0; i < times && connection.write(chunk); i++);
  await connection.until(hasFinalAnswer, 20_000);
  const answer = finalAnswer(connection.received());
  const closed = await connection.closedWithin(10_000);
  connection.destroy();
  return { answer, closed };
}

t.test('a refused body is not read in full: past the drain bound the gateway answers Connection: close and closes', async (t) => {
  const gw = await startGateway(t);
  const port = portOf(gw.publicUrl);
  const ops = portOf(gw.opsUrl);
  const json: [string, string] = ['Content-Type', 'application/json'];
  const declared = String(256 * MiB);
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const cases: Array<[string, number, string, number]> = [
    ['401 on a forwarded route', port, head('POST', '/accounts', [HOST, UA, json, ['Content-Length', declared]]), 401],
    ['404 for an unknown route', port, head('POST', '/nowhere', [HOST, UA, json, ['Content-Length', declared]]), 404],
    ['401 on the gateway\'s own route', port, head('POST', '/auth/api-key', [HOST, UA, json, ['Content-Length', declared]]), 401],
    ['ops: 401 without the admin token', ops, head('POST', '/admin/organizations', [HOST, json, ['Content-Length', declared]]), 401],
    ['ops: 404 for an unknown route', ops, head('POST', '/nowhere', [HOST, json, ['Content-Length', declared]]), 404],
  ];
  for (const [what, on, text, status] of cases) {
    const { answer, closed } = await refusedWhileSending(on, text, chunk, 16);
    t.equal(answer.status, status, `${what}: ${status}`);
    t.equal(answer.headers['connection'], 'close', `${what}: Connection: close`);
    t.ok(closed, `${what}: the gateway closes instead of reading 256 MiB`);
  }

  // A chunked body has no declared size: unread, it is not drained either.
  const chunked = Buffer.from(`10000\r\n${'a'.repeat(0x10000)}\r\n`);
  const { answer, closed } = await refusedWhileSending(port, head('POST', '/accounts', [HOST, UA, json, ['Transfer-Encoding', 'chunked']]), chunked, 4);
  t.equal(answer.status, 401, 'chunked: 401');
  t.equal(answer.headers['connection'], 'close', 'chunked: Connection: close');
  t.ok(closed, 'chunked: closed');
  t.equal(gw.upstream.requests.length, 0);

  // A small body is drained: the connection stays, and carries the next request.
  const connection = await openRaw(port);
  t.teardown(() => connection.destroy());
  connection.write(head('POST', '/accounts', [HOST, UA, json, ['Content-Length', '1024']]) + 'a'.repeat(1024));
  t.ok(await connection.until(hasFinalAnswer, 20_000));
  const first = finalAnswer(connection.received());
  t.equal(first.status, 401);
  t.not(first.headers['connection'], 'close', 'a body within the bound is drained, the connection kept');
  const after = connection.received().length;
  connection.write(head('GET', '/nowhere', [HOST, UA, ['Connection', 'close']]));
  t.ok(await connection.until((raw) => hasFinalAnswer(raw.slice(after)), 20_000), 'the next request on it is answered');
  t.equal(finalAnswer(connection.received().slice(after)).status, 404);
});

t.test('a CORS preflight answered while a large body is unread closes too', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_CORS_ORIGINS: 'https://app.example' } });
  const { answer, closed } = await refusedWhileSending(
    portOf(gw.publicUrl),
    head('OPTIONS', '/accounts', [HOST, UA, ['Origin', 'https://app.example'], ['Access-Control-Request-Method', 'POST'], ['Content-Length', String(256 * MiB)]]),
    Buffer.alloc(64 * 1024, 'a'),
    4,
  );
  t.equal(answer.status, 204, 'the preflight is answered');
  t.equal(answer.headers['connection'], 'close', 'Connection: close');
  t.ok(closed, 'closed instead of reading 256 MiB');
  t.equal(gw.upstream.requests.length, 0);
});

t.test('the fast lane: an answer given while the body is unread (the upstream down) closes too', async (t) => {
  // A port nothing listens on: taken, then freed.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const deadPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const gw = await startGateway(t, { env: { AUTHGATE_UPSTREAM_URL: `http://127.0.0.1:${deadPort}` } });
  const port = portOf(gw.publicUrl);
  const { apiKey } = await keyed(gw);
  const { answer, closed } = await refusedWhileSending(
    port,
    head('POST', '/accounts', [HOST, UA, ['Authorization', `Bearer ${apiKey}`], ['Content-Type', 'application/octet-stream'], ['Content-Length', String(256 * MiB)]]),
    Buffer.alloc(64 * 1024, 'a'),
    4,
  );
  t.equal(answer.status, 502, 'the upstream is down');
  t.equal(answer.headers['connection'], 'close', 'Connection: close');
  t.ok(closed, 'closed instead of reading 256 MiB');
});

t.test('Host: two, none, or one that is no host are refused as problems, on both ports and the fast lane', async (t) => {
  const gw = await startGateway(t);
  const port = portOf(gw.publicUrl);
  const ops = portOf(gw.opsUrl);
  const { apiKey, token } = await keyed(gw);
  // Warm the credential cache: the next request with the key is the fast lane's.
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${apiKey}` })).status, 200);
  gw.upstream.requests.length = 0;
  const ask = async (on: number, text: string) => {
    const connection = await openRaw(on);
    connection.write(text);
    await connection.until(hasFinalAnswer, 20_000);
    connection.destroy();
    return finalAnswer(connection.received());
  };
  const close: [string, string] = ['Connection', 'close'];
  const cases: Array<[string, number, string, number]> = [
    ['two Host headers, the fast lane', port, head('GET', '/accounts', [HOST, ['Host', 'evil.test'], UA, ['Authorization', `Bearer ${apiKey}`], close]), 1209],
    ['two Host headers, other case', port, head('GET', '/accounts', [['host', 'gateway.test'], ['HOST', 'gateway.test'], UA, ['Authorization', `Bearer ${token}`], close]), 1209],
    ['two Host headers, the gateway\'s own route', port, head('GET', '/auth/sessions', [HOST, ['Host', 'evil.test'], UA, ['Authorization', `Bearer ${token}`], close]), 1209],
    ['no Host', port, head('GET', '/accounts', [UA, ['Authorization', `Bearer ${apiKey}`], close]), 1210],
    ['no Host, an unknown route', port, head('GET', '/nowhere', [UA, close]), 1210],
    ['a Host that is no host', port, head('GET', '/accounts', [['Host', 'evil.test/admin?x'], UA, ['Authorization', `Bearer ${apiKey}`], close]), 1211],
    ['a Host with a space', port, head('GET', '/accounts', [['Host', 'gateway.test evil.test'], UA, ['Authorization', `Bearer ${apiKey}`], close]), 1211],
    ['ops: two Host headers', ops, head('GET', '/livez', [HOST, ['Host', 'evil.test'], close]), 1209],
    ['ops: no Host', ops, head('GET', '/livez', [close]), 1210],
    ['ops: a Host that is no host', ops, head('GET', '/livez', [['Host', 'a@b'], close]), 1211],
  ];
  for (const [what, on, text, code] of cases) {
    const answer = await ask(on, text);
    assertProblem(t, answer, 400, code, what);
    if (on === port) t.equal(answer.headers['x-authgate-environment'], 'sandbox', `${what}: with the environment header`);
    if (on === port) {
      const id = answer.headers['x-request-id'];
      t.ok(await eventually(async () => gw.logs.records().some((r) => r['reqId'] === id)), `${what}: an access-log line`);
    }
  }
  t.equal(gw.upstream.requests.length, 0, 'none reached the upstream');

  // What stays served: one Host, with a port or an IPv6 literal; HTTP/1.0 without one.
  for (const host of ['gateway.test', 'gateway.test:8443', '127.0.0.1', '[::1]:8080', '']) {
    const answer = await ask(port, head('GET', '/accounts', [['Host', host], UA, ['Authorization', `Bearer ${apiKey}`], close]));
    t.equal(answer.status, 200, `Host: ${JSON.stringify(host)}`);
  }
  const old = await ask(port, head('GET', '/accounts', [UA, ['Authorization', `Bearer ${apiKey}`]], '1.0'));
  t.equal(old.status, 200, 'HTTP/1.0 without Host');
  t.equal((await ask(ops, head('GET', '/livez', [close], '1.0'))).status, 200, 'ops: HTTP/1.0 without Host');
});
