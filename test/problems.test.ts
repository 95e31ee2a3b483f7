import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyError } from 'fastify';
import { Problem, problems, type ProblemName } from '../src/problems.js';
import { PROBLEM_CONTENT_TYPE, createErrorHandler, problemBody, toProblem } from '../src/request/error-handler.js';
import { StoreUnavailable } from '../src/store/store.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const entries = Object.entries(problems) as [ProblemName, (typeof problems)[ProblemName]][];

t.test('every problem code is unique, and statuses are errors', async (t) => {
  const codes = entries.map(([, spec]) => spec.code);
  t.equal(new Set(codes).size, codes.length);
  for (const [name, spec] of entries) {
    t.ok(Number.isInteger(spec.code) && spec.code >= 1000 && spec.code <= 9999, `${name} has a four-digit code`);
    t.ok(spec.status >= 400 && spec.status <= 599, `${name} is an error status`);
    t.ok(spec.title.length > 0);
  }
});

t.test('1010 is the missing User-Agent answer, a 403', async (t) => {
  t.same(problems.missingUserAgent, { status: 403, code: 1010, title: problems.missingUserAgent.title });
  t.same(entries.filter(([, spec]) => spec.code === 1010).map(([name]) => name), ['missingUserAgent']);
});

t.test('every code is documented in docs/errors.md', async (t) => {
  const path = `${root}docs/errors.md`;
  t.ok(existsSync(path), 'docs/errors.md exists');
  if (!existsSync(path)) return;
  const rows = readFileSync(path, 'utf8').split('\n').filter((line) => /^\s*\|/.test(line));
  for (const [name, spec] of entries) {
    // A table row whose first cell is the code, beside its status.
    const row = rows.find((r) => new RegExp(`^\\s*\\|\\s*\`?${spec.code}\`?\\s*\\|`).test(r));
    t.ok(row, `${name} (${spec.code}) has a row in docs/errors.md`);
    if (row !== undefined) t.match(row, new RegExp(`\\|\\s*\`?${spec.status}\`?\\s*\\|`), `${spec.code} is documented as ${spec.status}`);
  }
});

t.test('problemBody', async (t) => {
  t.same(problemBody('credentialInvalid'), {
    type: 'urn:authgate:problem:credential-invalid',
    title: problems.credentialInvalid.title,
    status: 401,
    code: 1102,
  });
  t.notOk('detail' in problemBody('credentialInvalid'), 'no detail key without a detail');
  t.same(problemBody('missingUserAgent', 'Send a User-Agent.'), {
    type: 'urn:authgate:problem:missing-user-agent',
    title: problems.missingUserAgent.title,
    status: 403,
    detail: 'Send a User-Agent.',
    code: 1010,
  });
  t.equal(problemBody('storeUnavailable', '').detail, '', 'an empty detail is still a detail');
  for (const [name, spec] of entries) {
    const body = problemBody(name);
    t.equal(body.status, spec.status);
    t.equal(body.code, spec.code);
    t.equal(body.title, spec.title);
    t.match(body.type, /^urn:authgate:problem:[a-z]+(-[a-z]+)*$/);
  }
  const types = entries.map(([name]) => problemBody(name).type);
  t.equal(new Set(types).size, types.length, 'types are unique');
});

/** Fastify's own error for a request, as its error handler sees it. */
async function fastifyErrorFor(request: { method: 'POST'; url: string; payload: string; headers: Record<string, string> }): Promise<FastifyError> {
  const app = Fastify({ bodyLimit: 64 });
  let caught: FastifyError | undefined;
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    caught = error;
    return reply.code(599).send();
  });
  app.post('/echo', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 5 } } } } }, async () => 'ok');
  await app.inject(request);
  await app.close();
  if (caught === undefined) throw new Error('fastify raised no error');
  return caught;
}

t.test('toProblem', async (t) => {
  t.test('StoreUnavailable → storeUnavailable', async (t) => {
    const problem = toProblem(new StoreUnavailable('redis timeout', { cause: new Error('ETIMEDOUT') }));
    t.type(problem, Problem);
    t.equal(problem.problem, 'storeUnavailable');
    t.equal(problem.reason, 'store_unavailable');
    t.notOk(problem.detail?.includes('redis timeout'), 'the backend message is not echoed');
  });

  t.test('a fastify validation error → badRequest', async (t) => {
    const error = await fastifyErrorFor({ method: 'POST', url: '/echo', payload: '{"name":"toolong"}', headers: { 'content-type': 'application/json' } });
    t.ok(error.validation, 'really a validation error');
    const problem = toProblem(error);
    t.equal(problem.problem, 'badRequest');
    t.equal(problem.detail, error.message, 'the detail says what did not fit the schema');
    t.match(problem.detail, /name/);
    const missing = await fastifyErrorFor({ method: 'POST', url: '/echo', payload: '{}', headers: { 'content-type': 'application/json' } });
    t.equal(toProblem(missing).problem, 'badRequest');
  });

  t.test('FST_ERR_CTP_BODY_TOO_LARGE → payloadTooLarge', async (t) => {
    const error = await fastifyErrorFor({ method: 'POST', url: '/echo', payload: JSON.stringify({ name: 'x'.repeat(500) }), headers: { 'content-type': 'application/json' } });
    t.equal(error.code, 'FST_ERR_CTP_BODY_TOO_LARGE');
    t.equal(toProblem(error).problem, 'payloadTooLarge');
    // By its code alone, whatever status it carries.
    t.equal(toProblem(Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' })).problem, 'payloadTooLarge');
  });

  t.test('malformed JSON and a wrong media type', async (t) => {
    const json = await fastifyErrorFor({ method: 'POST', url: '/echo', payload: '{"name":', headers: { 'content-type': 'application/json' } });
    t.equal(toProblem(json).problem, 'malformedJson');
    const media = await fastifyErrorFor({ method: 'POST', url: '/echo', payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(toProblem(media).problem, 'unsupportedMediaType');
  });

  t.test('a plain Error → internalError, echoing nothing', async (t) => {
    const problem = toProblem(new Error('secret internal detail'));
    t.equal(problem.problem, 'internalError');
    t.equal(problem.detail, undefined);
    t.equal(toProblem(new TypeError('x is undefined')).problem, 'internalError');
    t.equal(toProblem(Object.assign(new Error('odd'), { statusCode: 502 })).problem, 'internalError');
  });

  t.test('a Problem passes through unchanged', async (t) => {
    const problem = new Problem('insufficientScope', 'no', 'reason');
    t.equal(toProblem(problem), problem);
  });
});

t.test('the error handler renders problem+json', async (t) => {
  const app = Fastify({ logger: false });
  app.setErrorHandler(createErrorHandler('authgate'));
  app.get('/401', async () => {
    throw new Problem('credentialInvalid', undefined, 'expired_token');
  });
  app.get('/503', async () => {
    throw new StoreUnavailable('connection refused to 10.0.0.5');
  });
  app.get('/500', async () => {
    throw new Error('database password is hunter2');
  });
  t.teardown(() => app.close());

  const unauthorized = await app.inject({ method: 'GET', url: '/401' });
  t.equal(unauthorized.statusCode, 401);
  t.match(unauthorized.headers['content-type'], PROBLEM_CONTENT_TYPE);
  t.equal(unauthorized.headers['cache-control'], 'no-store');
  t.equal(unauthorized.headers['www-authenticate'], 'Bearer realm="authgate", error="invalid_token"');
  t.same(unauthorized.json(), problemBody('credentialInvalid'));

  const unavailable = await app.inject({ method: 'GET', url: '/503' });
  t.equal(unavailable.statusCode, 503);
  t.equal(unavailable.headers['retry-after'], '1');
  t.equal(unavailable.json().code, 1503);
  t.notOk(unavailable.body.includes('10.0.0.5'));

  const internal = await app.inject({ method: 'GET', url: '/500' });
  t.equal(internal.statusCode, 500);
  t.same(internal.json(), problemBody('internalError'));
  t.notOk(internal.body.includes('hunter2'));
});

t.test('a Problem captures no stack, and leaves the stack limit as it found it', async (t) => {
  const limit = Error.stackTraceLimit;
  const problem = new Problem('credentialInvalid', 'detail', 'unknown_key');
  t.ok(problem instanceof Error);
  t.equal(problem.stack?.split('\n').length, 1, 'only the message line: no frames were captured');
  t.equal(Error.stackTraceLimit, limit);
  t.ok((new Error('x').stack ?? '').split('\n').length > 1, 'other errors still have their frames');
});
