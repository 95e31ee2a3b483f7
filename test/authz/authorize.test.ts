import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { createAuthorize } from '../../src/authz/authorize.js';
import type { Principal } from '../../src/credentials/principal.js';
import { Problem } from '../../src/problems.js';
import '../../src/http/request-context.js';

/** authz/authorize.ts: a route's requirement against the principal authentication produced. */

const requestOf = (principal: Principal | null) => ({ principal }) as FastifyRequest;
const jwt: Principal = { orgId: 'org_1', via: 'jwt', credentialId: 'sess_1' };
const apiKey: Principal = { orgId: 'org_1', via: 'api_key', credentialId: 'key_1' };

t.test("'any' needs no stage at all", async (t) => {
  t.equal(createAuthorize('any'), undefined);
});

t.test("'login-token' takes a JWT only", async (t) => {
  const authorize = createAuthorize('login-token');
  if (authorize === undefined) throw new Error('no stage');
  await t.resolves(authorize(requestOf(jwt)));
  for (const principal of [apiKey, null]) {
    const error = await authorize(requestOf(principal)).catch((e: unknown) => e);
    t.type(error, Problem);
    t.match(error, { problem: 'loginTokenRequired', reason: 'login_token_required', detail: /POST \/auth\/login/ });
  }
});
