import t from 'tap';
import { buildGateway } from '../../src/gateway.js';
import { ADMIN_TOKEN, send, testConfig, UA } from '../helpers/gateway.js';
import { captureLogs } from '../helpers/log-capture.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * A gateway built with another route table (GatewayDeps.routes, compiled in-process) forwards that
 * one, over real HTTP to a real upstream, and no longer the default routes.
 */


t.test('a gateway built with another route table forwards it', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const config = testConfig({ AUTHGATE_UPSTREAM_URL: upstream.url });
  const routes = tableOf({ version: 1, scopes: { 'accounts:read': 'Read accounts' }, routes: [{ id: 'widgets', path: '/widgets', match: 'subtree', methods: { GET: 'accounts:read' } }] }, upstream.url);
  const gateway = await buildGateway(config, { logDestination: captureLogs().destination, routes });
  t.teardown(() => gateway.close());
  await gateway.publicServer.listen({ host: '127.0.0.1', port: 0 });
  await gateway.opsServer.listen({ host: '127.0.0.1', port: 0 });
  const urlOf = (server: typeof gateway.publicServer) => `http://127.0.0.1:${(server.server.address() as { port: number }).port}`;
  const publicUrl = urlOf(gateway.publicServer);
  const opsUrl = urlOf(gateway.opsServer);

  const owner = { name: 'Widgets', email: `widgets-${process.pid}@example.test`, password: 'forwarded-routes-password-1' };
  const created = await send(`${opsUrl}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(owner),
  });
  t.equal(created.status, 201, created.body);
  const login = await send(`${publicUrl}/auth/login`, {
    method: 'POST',
    headers: { ...UA, 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner.email, password: owner.password }),
  });
  t.equal(login.status, 200, login.body);
  const bearer = { ...UA, authorization: `Bearer ${login.json().token as string}` };

  const widget = await send(`${publicUrl}/widgets/42?colour=blue`, { headers: bearer });
  t.equal(widget.status, 200, widget.body);
  t.equal(upstream.requests.at(-1)?.url, '/widgets/42?colour=blue', 'forwarded to the upstream');
  t.equal(upstream.requests.at(-1)?.headers['x-organization-id'], created.json().id, 'with the identity injected');

  const anonymous = await send(`${publicUrl}/widgets/42`, { headers: UA });
  t.equal(anonymous.status, 401, 'the table\'s auth requirement holds');
  t.match(anonymous.headers['content-type'], /^application\/problem\+json/);

  const before = upstream.requests.length;
  const accounts = await send(`${publicUrl}/accounts`, { headers: bearer });
  t.equal(accounts.status, 404, 'a default route that is not in this table is not forwarded');
  const post = await send(`${publicUrl}/widgets/42`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' });
  t.equal(post.status, 405, 'a method outside the table is refused');
  t.equal(upstream.requests.length, before, 'neither reached the upstream');
});
