import type { FastifyReply, FastifyRequest } from 'fastify';
import t from 'tap';
import { createAuthorize } from '../../src/authz/authorize.js';
import { LEGACY_SCOPES as SCOPES, ALL_SCOPES_GRANT, grantOf } from '../../src/authz/scopes.js';
import type { Principal } from '../../src/credentials/principal.js';
import { Problem } from '../../src/problems.js';
import '../../src/request/request-context.js';

/** authz/authorize.ts: a route's requirement against the principal authentication produced. */

const requestOf = (principal: Principal | null) => ({ principal }) as FastifyRequest;
const jwt: Principal = { orgId: 'org_1', via: 'jwt', credentialId: 'sess_1', scopes: ALL_SCOPES_GRANT };
const apiKey: Principal = { orgId: 'org_1', via: 'api_key', credentialId: 'key_1', scopes: ALL_SCOPES_GRANT };

/** Runs a callback hook and gives what it passed to done(): undefined when it let the request on. */
function run(hook: ReturnType<typeof createAuthorize>, principal: Principal | null): unknown {
  let outcome: unknown = 'not called';
  hook(requestOf(principal), {} as FastifyReply, (error?: unknown) => {
    outcome = error;
  });
  return outcome;
}

t.test("'login-token' takes a JWT only", async (t) => {
  const authorize = createAuthorize('login-token', undefined);
  t.equal(run(authorize, jwt), undefined);
  for (const principal of [apiKey, null]) {
    const error = run(authorize, principal);
    t.type(error, Problem);
    t.match(error, { problem: 'loginTokenRequired', reason: 'login_token_required', detail: /POST \/auth\/login/ });
  }
});

t.test("'any' needs the route's scope: refused at declaration without one", async (t) => {
  t.throws(() => createAuthorize('any', undefined), /must name its scope/);
});

t.test("'any' with a scope: every credential holding it passes, any other is insufficient_scope", async (t) => {
  for (const scope of SCOPES) {
    const authorize = createAuthorize('any', scope);
    t.equal(run(authorize, jwt), undefined, `a login token holds ${scope}`);
    t.equal(run(authorize, apiKey), undefined, `a key with every scope holds ${scope}`);
    t.equal(run(authorize, { ...apiKey, scopes: grantOf([scope]) }), undefined, `a key with only ${scope}`);
    const without = { ...apiKey, scopes: grantOf(SCOPES.filter((other) => other !== scope)) };
    const error = run(authorize, without);
    t.type(error, Problem, `a key with every scope but ${scope}`);
    t.match(error, { problem: 'insufficientScope', reason: 'insufficient_scope', requiredScope: scope, detail: `This operation needs the scope ${scope}.` });
    t.type(run(authorize, null), Problem, 'no principal');
  }
  t.type(run(createAuthorize('any', 'accounts:write'), { ...apiKey, scopes: grantOf(['accounts:read', 'keys:write']) }), Problem, 'read does not imply write');
});
