import Fastify from 'fastify';
import t, { type Test } from 'tap';
import { createErrorHandler } from '../../src/request/error-handler.js';
import { AUTH_BODY_LIMIT, useStrictJsonBodies } from '../../src/http/json-body.js';

/** http/json-body.ts on a small app: what a strict JSON body accepts and how it refuses the rest. */

async function echoApp(t: Test) {
  const app = Fastify();
  app.setErrorHandler(createErrorHandler('authgate'));
  useStrictJsonBodies(app);
  app.post('/echo', async (request) => ({ body: request.body ?? 'no body' }));
  t.teardown(() => app.close());
  return app;
}

const post = (headers: Record<string, string>, payload: string) => ({ method: 'POST' as const, url: '/echo', headers, payload });
const json = { 'content-type': 'application/json' };

t.test('JSON is parsed; an identity encoding is no encoding', async (t) => {
  const app = await echoApp(t);
  t.same((await app.inject(post(json, '{"a":[1,2]}'))).json(), { body: { a: [1, 2] } });
  t.same((await app.inject(post({ ...json, 'content-encoding': ' Identity ' }, '{"a":1}'))).json(), { body: { a: 1 } });
  t.same((await app.inject(post({ 'content-type': 'application/json; charset=utf-8' }, '"s"'))).json(), { body: 's' });
});

t.test('an empty body is no body', async (t) => {
  const app = await echoApp(t);
  const res = await app.inject(post(json, ''));
  t.equal(res.statusCode, 200);
  t.same(res.json(), { body: 'no body' });
});

t.test('a compressed body is refused, not inflated: 415 1202', async (t) => {
  const app = await echoApp(t);
  for (const encoding of ['gzip', 'deflate', 'br', 'gzip, identity']) {
    const res = await app.inject(post({ ...json, 'content-encoding': encoding }, '{"a":1}'));
    t.equal(res.statusCode, 415, encoding);
    t.equal(res.json().code, 1202);
    t.match(res.json().detail, /Compressed/);
  }
});

t.test('malformed JSON and prototype poisoning: 400 1201', async (t) => {
  const app = await echoApp(t);
  for (const payload of ['{"a":', 'nul', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}']) {
    const res = await app.inject(post(json, payload));
    t.equal(res.statusCode, 400, payload);
    t.equal(res.json().code, 1201, payload);
  }
  t.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

t.test('other media types: 415; a body over the limit: 413 1203', async (t) => {
  const app = await echoApp(t);
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
    const res = await app.inject(post({ 'content-type': type }, 'a=1'));
    t.equal(res.statusCode, 415, type);
    t.equal(res.json().code, 1202, type);
  }
  t.equal(AUTH_BODY_LIMIT, 64 * 1024);
  const fits = await app.inject(post(json, JSON.stringify('x'.repeat(AUTH_BODY_LIMIT - 2))));
  t.equal(fits.statusCode, 200, 'exactly the limit');
  const over = await app.inject(post(json, JSON.stringify('x'.repeat(AUTH_BODY_LIMIT - 1))));
  t.equal(over.statusCode, 413, 'one byte over');
  t.equal(over.json().code, 1203);
});
