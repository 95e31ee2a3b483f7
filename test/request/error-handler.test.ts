import Fastify, { type FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import { createErrorHandler, PROBLEM_CONTENT_TYPE, problemBody, sendProblem, toProblem } from '../../src/request/error-handler.js';
import { Problem, problems, type ProblemName } from '../../src/problems.js';
import { StoreUnavailable } from '../../src/store/store.js';
import { captureLogs } from '../helpers/log-capture.js';

/**
 * request/error-handler.ts: every problem of the catalogue rendered by inject, the headers each
 * status needs (WWW-Authenticate on 401 by reason, Retry-After on 429 and 503), fastify's own
 * errors mapped by code and status, and an unknown error logged once and echoed never.
 * (test/problems.test.ts checks the catalogue itself and a first set of mappings.)
 */

async function throwingApp(t: Test, realm = 'authgate'): Promise<{ app: FastifyInstance; logs: ReturnType<typeof captureLogs>; throwing: (error: Error) => void }> {
  const logs = captureLogs();
  let next: Error = new Error('unset');
  const app = Fastify({ logger: { level: 'info', stream: logs.destination } });
  app.setErrorHandler(createErrorHandler(realm));
  app.get('/throw', async () => {
    throw next;
  });
  t.teardown(() => app.close());
  return { app, logs, throwing: (error) => (next = error) };
}

t.test('every problem of the catalogue renders as application/problem+json with its status and code', async (t) => {
  const { app, throwing } = await throwingApp(t);
  for (const name of Object.keys(problems) as ProblemName[]) {
    throwing(new Problem(name, `detail of ${name}`));
    const res = await app.inject({ url: '/throw' });
    const spec = problems[name];
    t.equal(res.statusCode, spec.status, name);
    t.ok(String(res.headers['content-type']).startsWith(PROBLEM_CONTENT_TYPE), name);
    t.equal(res.headers['cache-control'], 'no-store', name);
    t.same(res.json(), problemBody(name, `detail of ${name}`), name);
    t.equal(res.headers['www-authenticate'] !== undefined, spec.status === 401, `${name}: WWW-Authenticate on 401 only`);
    t.equal(res.headers['retry-after'] !== undefined, spec.status === 503 || spec.status === 429, `${name}: Retry-After on 429 and 503 only`);
  }
});

t.test('WWW-Authenticate by reason (RFC 6750 §3), in the realm of the port', async (t) => {
  const cases: Array<[ProblemName, string | undefined, string]> = [
    ['credentialMissing', 'missing', 'Bearer realm="ops"'],
    ['credentialInvalid', 'not_bearer', 'Bearer realm="ops"'],
    ['credentialInvalid', 'malformed', 'Bearer realm="ops", error="invalid_request"'],
    ['credentialInvalid', 'duplicate', 'Bearer realm="ops", error="invalid_request"'],
    ['credentialInvalid', 'expired_token', 'Bearer realm="ops", error="invalid_token"'],
    ['credentialInvalid', 'unknown_key', 'Bearer realm="ops", error="invalid_token"'],
    ['wrongEnvironment', 'wrong_environment', 'Bearer realm="ops", error="invalid_token"'],
    ['loginFailed', 'bad_password', 'Bearer realm="ops"'],
    ['adminTokenInvalid', 'bad_admin_token', 'Bearer realm="ops"'],
  ];
  const { app, throwing } = await throwingApp(t, 'ops');
  for (const [name, reason, expected] of cases) {
    throwing(new Problem(name, undefined, reason));
    t.equal((await app.inject({ url: '/throw' })).headers['www-authenticate'], expected, `${name}/${reason}`);
  }
});

t.test('Retry-After: the problem\'s own, else 1', async (t) => {
  const { app, throwing } = await throwingApp(t);
  throwing(new Problem('tooManyLoginAttempts', undefined, 'login_throttled', 37));
  t.equal((await app.inject({ url: '/throw' })).headers['retry-after'], '37');
  throwing(new Problem('overloaded'));
  t.equal((await app.inject({ url: '/throw' })).headers['retry-after'], '1');
});

t.test('fastify errors by code and by status', async (t) => {
  const byCode: Array<[string, ProblemName]> = [
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 'unsupportedMediaType'],
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 'badRequest'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 'malformedJson'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 'malformedJson'],
    ['FST_ERR_CTP_EMPTY_TYPE', 'unsupportedMediaType'],
    ['FST_ERR_CTP_INVALID_TYPE', 'unsupportedMediaType'],
    ['FST_ERR_BAD_URL', 'badRequest'],
    ['FST_ERR_MAX_PARAM_LENGTH', 'badRequest'],
    ['FST_ERR_ASYNC_CONSTRAINT', 'badRequest'],
  ];
  for (const [code, name] of byCode) t.equal(toProblem(Object.assign(new Error('x'), { code })).problem, name, code);
  const byStatus: Array<[number, ProblemName]> = [
    [413, 'payloadTooLarge'],
    [415, 'unsupportedMediaType'],
    [404, 'notFound'],
    [405, 'methodNotAllowed'],
    [431, 'headersTooLarge'],
    [401, 'internalError'],
    [503, 'internalError'],
  ];
  for (const [statusCode, name] of byStatus) t.equal(toProblem(Object.assign(new Error('x'), { statusCode })).problem, name, String(statusCode));
  t.equal(toProblem(Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 })).problem, 'malformedJson');
  const poisoned = toProblem(Object.assign(new Error('Object contains forbidden prototype property'), { statusCode: 400 }));
  t.match(poisoned, { problem: 'badRequest', detail: 'The request body is not acceptable.' }, 'a 400 that is not a SyntaxError');
});

t.test('an unknown error: a 500 that echoes nothing, logged once with its error', async (t) => {
  const { app, logs, throwing } = await throwingApp(t);
  throwing(new Error('connection string redis://:hunter2@10.0.0.5'));
  const res = await app.inject({ url: '/throw' });
  t.equal(res.statusCode, 500);
  t.same(res.json(), problemBody('internalError'));
  t.notOk(res.body.includes('hunter2'));
  const errors = logs.records().filter((r) => r['msg'] === 'unhandled error');
  t.equal(errors.length, 1);
  t.match(errors[0], { level: 50, err: { message: /connection string/ } });

  throwing(new StoreUnavailable('redis down'));
  const unavailable = await app.inject({ url: '/throw' });
  t.equal(unavailable.statusCode, 503);
  t.equal(logs.records().filter((r) => r['msg'] === 'unhandled error').length, 1, 'a known problem is not logged as an error');
});

t.test('sendProblem renders outside the error handler (the refusals use it)', async (t) => {
  const app = Fastify();
  app.get('/direct', async (_request, reply) => sendProblem(reply, new Problem('credentialInvalid', undefined, 'malformed'), 'direct'));
  t.teardown(() => app.close());
  const res = await app.inject({ url: '/direct' });
  t.equal(res.statusCode, 401);
  t.equal(res.headers['www-authenticate'], 'Bearer realm="direct", error="invalid_request"');
  t.same(res.json(), problemBody('credentialInvalid'));
});
