import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { clientErrorHandler } from '../../src/request/refusals.js';
import { ADMIN_TOKEN, eventually, startGateway } from '../helpers/gateway.js';
import { parseResponse, rawRequest, requestText } from '../helpers/raw-http.js';

/**
 * The edges of HTTP, as raw bytes on a socket: whatever refuses a request (node's parser, the
 * router, the not-found handler, the User-Agent guard), the answer is an application/problem+json
 * body with its documented code and an x-request-id, and it echoes nothing the client sent.
 */
type Answer = ReturnType<typeof parseResponse>;

function assertProblem(t: Test, answer: Answer, status: number, code: number, sent: string, what: string): void {
  t.equal(answer.status, status, `${what}: status`);
  t.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/, `${what}: a problem body`);
  t.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, `${what}: an x-request-id`);
  let body: { code?: number; status?: number; type?: string; title?: string } = {};
  try {
    body = JSON.parse(answer.body) as typeof body;
  } catch {
    t.fail(`${what}: the body is JSON (${answer.body.slice(0, 80)})`);
  }
  t.equal(body.code, code, `${what}: code ${code}`);
  t.equal(body.status, status, `${what}: the body's status`);
  t.match(body.type ?? '', /^urn:authgate:problem:/, `${what}: a problem type`);
  t.notOk(answer.body.includes(sent), `${what}: the body does not echo what was sent`);
}

const UA: [string, string] = ['User-Agent', 'refusals-test'];

t.test('public port: every refusal at the edges of HTTP is a problem', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const port = Number(new URL(gw.publicUrl).port);
  const ask = async (text: string) => parseResponse((await rawRequest(port, text)).raw);

  t.test('a malformed percent-encoding: 400, the raw path not echoed', async (t) => {
    const answer = await ask(requestText('GET', '/accounts/%zz-marker', [UA]));
    assertProblem(t, answer, 400, 1200, '%zz-marker', '/accounts/%zz-marker');
    t.equal(answer.headers['x-authgate-environment'], 'sandbox', 'with the environment header every answer has');
    const logged = () => gw.logs.records().find((r) => r['reqId'] === answer.headers['x-request-id']);
    t.ok(await eventually(async () => logged() !== undefined), 'and the one access-log line, as for any request');
    t.match(logged(), { route: 'unmatched', status: 400 });
    t.notOk(gw.logs.text().includes('%zz-marker'), 'the raw path is not logged either');
  });

  t.test('an Expect other than 100-continue: 417 from node\'s checkExpectation, as a problem', async (t) => {
    const answer = await ask(requestText('GET', '/accounts', [UA, ['Expect', 'marker-expectation']]));
    assertProblem(t, answer, 417, 1208, 'marker-expectation', 'Expect: marker-expectation');
    t.equal(answer.headers['connection'], 'close');
    t.equal(answer.headers['x-authgate-environment'], 'sandbox');
  });

  t.test('a body in a transfer coding other than chunked: 400 before authentication, nothing forwarded', async (t) => {
    const body = '5\r\nhello\r\n0\r\n\r\n';
    for (const coding of ['gzip, chunked', 'deflate,chunked']) {
      const before = gw.upstream.requests.length;
      const answer = await ask(requestText('POST', '/accounts', [UA, ['Authorization', `Bearer ${token}`], ['Transfer-Encoding', coding]]) + body);
      assertProblem(t, answer, 400, 1200, 'hello', `Transfer-Encoding: ${coding}`);
      t.equal(gw.upstream.requests.length, before, `${coding}: nothing reached the upstream`);
    }
    const plain = await ask(requestText('POST', '/accounts', [UA, ['Authorization', `Bearer ${token}`], ['Transfer-Encoding', 'chunked']]) + body);
    t.equal(plain.status, 200, 'plain chunked is forwarded');
    t.equal(gw.upstream.requests.at(-1)?.body, 'hello', 'whole');
    gw.upstream.requests.length = 0; // the subtests after this one count from none
  });

  t.test('a header block over 16 KiB: 431 from node, as a problem, and the connection closes', async (t) => {
    const answer = await ask(requestText('GET', '/accounts', [UA, ['X-Padding', 'p'.repeat(17 * 1024)]]));
    assertProblem(t, answer, 431, 1206, 'ppppp', 'oversized headers');
    t.equal(answer.headers['connection'], 'close');
    t.equal(answer.headers['x-authgate-environment'], 'sandbox');
  });

  t.test('a malformed request: 400 from node, as a problem', async (t) => {
    const cases: Array<[string, string]> = [
      ['GET /accounts HTTP/1.1\r\nHost: gateway.test\r\nUser-Agent: t\r\nNot a header line marker\r\n\r\n', 'marker'],
      ['GET /accounts HTTP/1.1\r\nHost: gateway.test\r\nBad(Name)marker: x\r\n\r\n', 'marker'],
      ['BREWmarker /pot HTTP/1.1\r\nHost: gateway.test\r\n\r\n', 'BREWmarker'],
      ['GET /accounts HTTP/9.9marker\r\nHost: gateway.test\r\n\r\n', '9.9marker'],
      ['POST /auth/login HTTP/1.1\r\nHost: gateway.test\r\nUser-Agent: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', 'ab'],
    ];
    for (const [text, sent] of cases) {
      const answer = await ask(text);
      assertProblem(t, answer, 400, 1200, sent, JSON.stringify(text.split('\r\n')[0]));
      t.equal(answer.headers['connection'], 'close');
    }
  });

  t.test('a known path with another method: 405 with Allow, before authentication', async (t) => {
    const cases: Array<[string, string, string]> = [
      ['GET', '/auth/login', 'POST'],
      ['PUT', '/auth/logout', 'POST'],
      ['DELETE', '/auth/api-key', 'GET, HEAD, POST'],
      ['POST', '/auth/api-key/key_x', 'GET, HEAD, PATCH, DELETE'],
      ['PUT', '/auth/api-key/key_x', 'GET, HEAD, PATCH, DELETE'],
      ['POST', '/organization/me', 'GET, HEAD'],
      ['DELETE', '/organization/me', 'GET, HEAD'],
      ['OPTIONS', '/organization/me', 'GET, HEAD'],
      ['TRACE', '/accounts', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'],
      ['TRACE', '/accounts/x', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'],
    ];
    for (const [method, path, allow] of cases) {
      for (const headers of [[UA], [UA, ['Authorization', `Bearer ${token}`] as [string, string]]]) {
        const answer = await ask(requestText(method, path, headers));
        assertProblem(t, answer, 405, 1205, path, `${method} ${path}`);
        t.equal(answer.headers['allow'], allow, `${method} ${path}: Allow`);
      }
    }
    t.equal(gw.upstream.requests.length, 0, 'nothing reached the upstream');
  });

  t.test('what is not a route stays a 404, whatever the method', async (t) => {
    for (const [method, target] of [
      ['GET', '/nope'],
      ['DELETE', '/auth'],
      ['POST', 'http://evil.test/organization/me'],
      ['POST', '/organization/mex'], // '/organization/me/' is /organization/me's since issue 45: 405
      ['PUT', '/accounts/../auth/login'],
    ] as const) {
      const answer = await ask(requestText(method, target, [UA]));
      assertProblem(t, answer, 404, 1204, target, `${method} ${target}`);
      t.notOk(answer.headers['allow'], 'no Allow');
    }
  });

  t.test('the 403/1010 for a missing User-Agent carries an x-request-id', async (t) => {
    for (const path of ['/accounts', '/nope', '/auth/login']) {
      const answer = await ask(requestText('GET', path, []));
      assertProblem(t, answer, 403, 1010, path, `GET ${path} without a User-Agent`);
    }
    const kept = await ask(requestText('GET', '/accounts', [['X-Request-Id', 'trace-1010']]));
    t.equal(kept.headers['x-request-id'], 'trace-1010', "a client's sane request id is kept");
  });

  t.test('a path still encoded after one decoding: 400 before authentication, nothing upstream', async (t) => {
    const targets = [
      '/accounts/%252e%252e/x',
      '/accounts/%252E%252E/admin',
      '/accounts/%252e/x',
      '/accounts/x/%252e%252e',
      '/accounts/.%252e/x',
      '/accounts/a%252fb',
      '/accounts/a%252Fb',
      '/accounts/a%255cb',
      '/accounts/%252e%252e?ok=1',
    ];
    for (const target of targets) {
      for (const headers of [[UA], [UA, ['Authorization', `Bearer ${token}`] as [string, string]]]) {
        gw.upstream.requests.length = 0;
        const answer = await ask(requestText('GET', target, headers));
        assertProblem(t, answer, 400, 1200, target, target);
        t.equal(gw.upstream.requests.length, 0, `${target}: nothing reached the upstream`);
      }
    }
    // `%32` is an encoded digit (unreserved): the path guard refuses it as ambiguous (404, 1204)
    // before the double decoding is looked at; nothing reaches the upstream either way.
    for (const headers of [[UA], [UA, ['Authorization', `Bearer ${token}`] as [string, string]]]) {
      gw.upstream.requests.length = 0;
      const target = '/accounts/%25%32%65%25%32%65/x';
      assertProblem(t, await ask(requestText('GET', target, headers)), 404, 1204, target, target);
      t.equal(gw.upstream.requests.length, 0, `${target}: nothing reached the upstream`);
    }
    // A `%` that decodes to something harmless is forwarded as it came.
    for (const target of ['/accounts/100%25', '/accounts/a%2525b', '/accounts/%252x', '/accounts/file%252ejson', '/accounts/x?next=%252e%252e']) {
      gw.upstream.requests.length = 0;
      const answer = await ask(requestText('GET', target, [UA, ['Authorization', `Bearer ${token}`]]));
      t.equal(answer.status, 200, `${target} is forwarded`);
      t.same(gw.upstream.requests.map((r) => r.url), [target], `${target}: the upstream sees it untouched`);
    }
  });
});

t.test('ops port: the same edges, the same problems', async (t) => {
  const gw = await startGateway(t);
  const port = Number(new URL(gw.opsUrl).port);
  const ask = async (text: string) => parseResponse((await rawRequest(port, text)).raw);
  const admin: [string, string] = ['Authorization', `Bearer ${ADMIN_TOKEN}`];

  assertProblem(t, await ask(requestText('GET', '/admin/organizations/%zz-marker', [admin])), 400, 1200, '%zz-marker', 'bad percent-encoding');
  assertProblem(t, await ask(requestText('GET', '/livez', [['X-Padding', 'p'.repeat(17 * 1024)]])), 431, 1206, 'ppppp', 'oversized headers');
  assertProblem(t, await ask('GET /livez HTTP/1.1\r\nHost: ops\r\nNot a header marker\r\n\r\n'), 400, 1200, 'marker', 'malformed header');
  const wrongMethod = await ask(requestText('PUT', '/admin/organizations', [admin]));
  assertProblem(t, wrongMethod, 405, 1205, '/admin', 'PUT /admin/organizations');
  t.equal(wrongMethod.headers['allow'], 'GET, HEAD, POST');
  const readyz = await ask(requestText('POST', '/readyz', []));
  assertProblem(t, readyz, 405, 1205, '/readyz', 'POST /readyz');
  t.equal(readyz.headers['allow'], 'GET, HEAD');
  assertProblem(t, await ask(requestText('GET', '/nope', [])), 404, 1204, '/nope', 'unknown path');
});

t.test('a request that does not arrive in time: 408 problem from the same clientError handler', async (t) => {
  // The gateway's own limits are 10 s and 30 s; a server with the same handler and short limits
  // shows node's real timeout path without waiting for them.
  const server = createServer({ headersTimeout: 300, requestTimeout: 400, connectionsCheckingInterval: 50 }, (_request, response) => response.end('ok'));
  server.on('clientError', clientErrorHandler({ 'x-authgate-environment': 'sandbox' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const answer = parseResponse((await rawRequest(port, 'GET /accounts HTTP/1.1\r\nHost: gateway.test\r\nX-Slow: marker', 10_000)).raw);
  assertProblem(t, answer, 408, 1207, 'marker', 'headers never finished');
  t.equal(answer.headers['connection'], 'close');
  t.equal(answer.headers['x-authgate-environment'], 'sandbox');
});
