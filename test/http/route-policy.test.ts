import { ALL_SCOPES_GRANT, grantOf } from '../../src/authz/scopes.js';
import Fastify, { type FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import type { CredentialResolver, Resolution } from '../../src/credentials/resolver.js';
import { createErrorHandler } from '../../src/request/error-handler.js';
import '../../src/request/request-context.js';
import routePolicy from '../../src/http/route-policy.js';

/**
 * http/route-policy.ts on a small fastify app: each route's `config.auth` fixes its stages, they
 * run before the route's own onRequest hooks and before its body is read, and a route that
 * declares nothing is refused when the app starts.
 */

const PRINCIPALS: Record<string, Resolution> = {
  'jwt-token': { ok: true, principal: { orgId: 'org_1', via: 'jwt', credentialId: 'sess_1', scopes: ALL_SCOPES_GRANT } },
  'agk_test_key': { ok: true, principal: { orgId: 'org_1', via: 'api_key', credentialId: 'key_1', scopes: ALL_SCOPES_GRANT } },
};
/** Answers from a table: the stage under test is the policy, not credential resolution. */
const resolver: Pick<CredentialResolver, 'resolve'> = { resolve: (token) => PRINCIPALS[token] ?? { ok: false, kind: 'jwt', reason: 'invalid_token' } };

async function appWith(t: Test, declare: (app: FastifyInstance, seen: string[]) => void) {
  const app = Fastify();
  app.decorateRequest('principal', null);
  app.decorateRequest('authDecision', null);
  app.setErrorHandler(createErrorHandler('authgate'));
  const seen: string[] = [];
  await app.register(routePolicy, { resolver, record: (kind, outcome, reason) => seen.push(`decision ${kind} ${outcome} ${reason}`), noteKeyUse: (principal) => seen.push(`use ${principal.credentialId}`) });
  declare(app, seen);
  t.teardown(() => app.close());
  return { app, seen };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

t.test('a route without config.auth is refused at start: nothing is public by accident', async (t) => {
  const app = Fastify();
  await app.register(routePolicy, { resolver, record: () => {}, noteKeyUse: () => {} });
  t.throws(() => app.get('/undeclared', async () => 'open'), /GET \/undeclared declares no config\.auth/);
  await app.close();
});

t.test("'none': no credential read, no decision recorded", async (t) => {
  const { app, seen } = await appWith(t, (app) => app.get('/open', { config: { auth: 'none' } }, async (request) => ({ principal: request.principal })));
  const res = await app.inject({ url: '/open', headers: bearer('garbage') });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { principal: null });
  t.same(seen, []);
});

t.test("'any': either credential kind; a refusal is a 401 problem", async (t) => {
  const { app, seen } = await appWith(t, (app) => app.get('/any', { config: { auth: 'any', scope: 'accounts:read' } }, async (request) => request.principal));
  t.equal((await app.inject({ url: '/any', headers: bearer('jwt-token') })).json().via, 'jwt');
  t.equal((await app.inject({ url: '/any', headers: bearer('agk_test_key') })).json().via, 'api_key');
  const missing = await app.inject({ url: '/any' });
  t.equal(missing.statusCode, 401);
  t.equal(missing.json().code, 1101);
  const invalid = await app.inject({ url: '/any', headers: bearer('nope') });
  t.equal(invalid.statusCode, 401);
  t.equal(invalid.json().code, 1102);
  t.same(seen, ['decision jwt allowed ok', 'decision api_key allowed ok', 'use key_1', 'decision none denied missing', 'decision jwt denied invalid_token']);
});

t.test("'any' without a scope is refused at start: no route is open to every key by accident", async (t) => {
  const app = Fastify();
  await app.register(routePolicy, { resolver, record: () => {}, noteKeyUse: () => {} });
  t.throws(() => app.get('/unscoped', { config: { auth: 'any' } }, async () => 'open'), /GET \/unscoped: a route open to API keys must name its scope/);
  await app.close();
});

t.test("'any' with a scope: a key without it is 403 1106 with the scope in WWW-Authenticate, and the handler never runs", async (t) => {
  const narrow: Resolution = { ok: true, principal: { orgId: 'org_1', via: 'api_key', credentialId: 'key_2', scopes: grantOf(['accounts:read']) } };
  const app = Fastify();
  app.decorateRequest('principal', null);
  app.decorateRequest('authDecision', null);
  app.setErrorHandler(createErrorHandler('authgate'));
  let handled = 0;
  await app.register(routePolicy, { resolver: { resolve: (token) => (token === 'agk_narrow' ? narrow : resolver.resolve(token)) }, record: () => {}, noteKeyUse: () => {} });
  app.post('/write', { config: { auth: 'any', scope: 'accounts:write' } }, async () => ++handled);
  app.get('/read', { config: { auth: 'any', scope: 'accounts:read' } }, async () => ++handled);
  t.teardown(() => app.close());
  const refused = await app.inject({ method: 'POST', url: '/write', headers: bearer('agk_narrow') });
  t.equal(refused.statusCode, 403);
  t.match(refused.json(), { code: 1106, title: 'Insufficient scope', detail: 'This operation needs the scope accounts:write.' });
  t.equal(refused.headers['www-authenticate'], 'Bearer realm="authgate", error="insufficient_scope", scope="accounts:write"');
  t.equal(handled, 0, 'the handler never ran');
  t.equal((await app.inject({ url: '/read', headers: bearer('agk_narrow') })).statusCode, 200, 'the scope it holds');
  t.equal((await app.inject({ method: 'POST', url: '/write', headers: bearer('jwt-token') })).statusCode, 200, 'a login token holds every scope');
  t.equal(handled, 2);
});

t.test("'login-token': an API key is authenticated, then refused 403 1103", async (t) => {
  const { app, seen } = await appWith(t, (app) => app.post('/login-only', { config: { auth: 'login-token' } }, async () => 'done'));
  t.equal((await app.inject({ method: 'POST', url: '/login-only', headers: bearer('jwt-token') })).statusCode, 200);
  const refused = await app.inject({ method: 'POST', url: '/login-only', headers: bearer('agk_test_key') });
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().code, 1103);
  t.same(seen, ['decision jwt allowed ok', 'decision api_key allowed ok', 'use key_1'], 'the key was a valid credential (and so used); authorization refused it');
});

t.test("the stages run before the route's own onRequest hooks, and before its body is parsed", async (t) => {
  const { app, seen } = await appWith(t, (app, seen) =>
    app.post('/ordered', {
      config: { auth: 'login-token' },
      onRequest: async (request) => void seen.push(`route hook sees ${request.principal?.via ?? 'nobody'}`),
      handler: async () => 'ok',
    }),
  );
  const ok = await app.inject({ method: 'POST', url: '/ordered', headers: { ...bearer('jwt-token'), 'content-type': 'application/json' }, payload: '{}' });
  t.equal(ok.statusCode, 200);
  t.same(seen, ['decision jwt allowed ok', 'route hook sees jwt']);
  seen.length = 0;
  const refused = await app.inject({ method: 'POST', url: '/ordered', headers: { ...bearer('agk_test_key'), 'content-type': 'application/json' }, payload: '{"malformed":' });
  t.equal(refused.statusCode, 403, 'the refusal, not the malformed body');
  t.same(seen, ['decision api_key allowed ok', 'use key_1'], 'the route hook never ran');
});
