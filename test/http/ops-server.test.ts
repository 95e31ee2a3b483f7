import t from 'tap';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * http/ops-server.ts by inject: health, metrics and the OpenAPI documents without a token,
 * the admin API behind it, problems for every refusal, and the public API kept off this port.
 */

t.test('the ops port', async (t) => {
  const gw = await injectGateway(t);

  t.test('liveness and readiness', async (t) => {
    const live = await gw.ops({ url: '/livez', bare: true });
    t.equal(live.statusCode, 200);
    t.same(live.json(), { status: 'alive' });
    t.match(live.headers['x-request-id'], /^[0-9a-f-]{36}$/);
    const ready = await gw.ops({ url: '/readyz', bare: true });
    t.equal(ready.statusCode, 200);
    t.same(ready.json(), { status: 'ready', invalidation: 'subscribed', routes: { hash: gw.gateway.routes.current().hash, source: 'built-in', openapi: 'documented' } });
    t.match(ready.json().routes.hash, /^[0-9a-f]{16}$/, "the live table's hash");
  });

  t.test('metrics in the Prometheus text format', async (t) => {
    const res = await gw.ops({ url: '/metrics', bare: true });
    t.equal(res.statusCode, 200);
    t.match(res.headers['content-type'], /^text\/plain/);
    t.match(res.body, /^# HELP authgate_/m);
    t.match(res.body, /authgate_store_up\{[^}]*\} 1/);
  });

  t.test('the OpenAPI documents: the public one lists the public routes, the admin one the admin routes', async (t) => {
    const publicDoc = (await gw.ops({ url: '/openapi.json', bare: true })).json<{ paths: Record<string, unknown> }>();
    t.ok(publicDoc.paths['/auth/login']);
    t.ok(publicDoc.paths['/auth/api-key']);
    t.notOk(Object.keys(publicDoc.paths).some((path) => path.startsWith('/admin')), 'no admin route in the public document');
    const adminDoc = (await gw.ops({ url: '/openapi/admin.json', bare: true })).json<{ paths: Record<string, unknown> }>();
    t.ok(adminDoc.paths['/admin/organizations']);
    t.notOk(Object.keys(adminDoc.paths).some((path) => path.startsWith('/auth')), 'no public route in the admin document');
    t.notOk(Object.keys(adminDoc.paths).some((path) => ['/livez', '/readyz', '/metrics'].includes(path)), 'the probes are hidden');
  });

  t.test('the public API is not served here, and the public port serves none of this', async (t) => {
    assertProblem(t, await gw.ops({ method: 'POST', url: '/auth/login', payload: { email: 'a@example.test', password: 'x' } }), 404, 1204, '/auth/login on ops');
    assertProblem(t, await gw.ops({ url: '/accounts' }), 404, 1204, '/accounts on ops');
    for (const url of ['/metrics', '/livez', '/readyz', '/openapi.json', '/admin/organizations/org_x']) {
      assertProblem(t, await gw.pub({ url, headers: { authorization: 'Bearer test-admin-token-0123456789' } }), 404, 1204, `${url} on the public port`);
    }
  });

  t.test('refusals are problems: unknown path, wrong method', async (t) => {
    assertProblem(t, await gw.ops({ url: '/nowhere', bare: true }), 404, 1204, 'unknown');
    const res = await gw.ops({ method: 'POST', url: '/livez', bare: true });
    assertProblem(t, res, 405, 1205, 'POST /livez');
    t.match(res.headers['allow'], /GET/);
  });

  t.test('a sane client request id is kept; no User-Agent is required here', async (t) => {
    const res = await gw.ops({ url: '/livez', headers: { 'x-request-id': 'probe-1' }, bare: true });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-request-id'], 'probe-1');
  });

  t.test('draining: readiness fails with Retry-After, liveness stays', async (t) => {
    gw.gateway.startDraining();
    const ready = await gw.ops({ url: '/readyz', bare: true });
    t.equal(ready.statusCode, 503);
    t.equal(ready.headers['retry-after'], '1');
    t.same(ready.json(), { status: 'draining', invalidation: 'subscribed', routes: { hash: gw.gateway.routes.current().hash, source: 'built-in', openapi: 'documented' } });
    t.equal((await gw.ops({ url: '/livez', bare: true })).statusCode, 200);
  });
});
