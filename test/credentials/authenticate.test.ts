import { ALL_SCOPES_GRANT } from '../../src/authz/scopes.js';
import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { createAuthenticate } from '../../src/credentials/authenticate.js';
import type { CredentialResolver, Resolution } from '../../src/credentials/resolver.js';
import { toProblem } from '../../src/request/error-handler.js';
import '../../src/request/request-context.js';
import { Problem } from '../../src/problems.js';
import { StoreUnavailable } from '../../src/store/store.js';

/**
 * credentials/authenticate.ts: the Authorization header to request.principal, or the problem to
 * answer, with the decision recorded once per request (for the metric and the log line).
 */

type Decision = [kind: string, outcome: string, reason: string];

function setup(answers: Record<string, Resolution | 'store-down'>) {
  const decisions: Decision[] = [];
  const resolver: Pick<CredentialResolver, 'resolve'> = {
    resolve(token) {
      const answer = answers[token];
      if (answer === 'store-down') return Promise.reject(new StoreUnavailable('redis timeout'));
      // Asynchronous for one token, synchronous (a cache hit) for the others: both paths are taken.
      if (token.startsWith('async-')) return Promise.resolve(answer ?? { ok: false, kind: 'jwt', reason: 'invalid_token' });
      return answer ?? { ok: false, kind: 'jwt', reason: 'invalid_token' };
    },
  };
  const authenticate = createAuthenticate(resolver, (kind, outcome, reason) => decisions.push([kind, outcome, reason]));
  const run = async (headers: Record<string, string>, rawHeaders: string[] = Object.entries(headers).flat()) => {
    const request = { headers, raw: { rawHeaders }, principal: null, authDecision: null } as unknown as FastifyRequest;
    const error = await authenticate(request).then(() => undefined, (e: unknown) => e);
    return { request, error };
  };
  return { run, decisions };
}

const jwtPrincipal = { orgId: 'org_1', via: 'jwt', credentialId: 'sess_1', scopes: ALL_SCOPES_GRANT } as const;
const keyPrincipal = { orgId: 'org_1', via: 'api_key', credentialId: 'key_1', scopes: ALL_SCOPES_GRANT } as const;

t.test('a valid credential, synchronous or not: the principal, the allowed decision', async (t) => {
  const { run, decisions } = setup({ 'jwt-ok': { ok: true, principal: jwtPrincipal }, 'async-key': { ok: true, principal: keyPrincipal } });
  const first = await run({ authorization: 'Bearer jwt-ok' });
  t.equal(first.error, undefined);
  t.same(first.request.principal, jwtPrincipal);
  t.same(first.request.authDecision, { kind: 'jwt', outcome: 'allowed', reason: 'ok' });
  const second = await run({ authorization: 'bearer   async-key' });
  t.same(second.request.principal, keyPrincipal, 'the scheme is case-insensitive');
  t.same(decisions, [['jwt', 'allowed', 'ok'], ['api_key', 'allowed', 'ok']]);
});

t.test('an unusable Authorization header: 401, no resolver call, decision kind none', async (t) => {
  const { run, decisions } = setup({});
  const cases: Array<[string, Record<string, string>, string[] | undefined, string, string]> = [
    ['missing', {}, undefined, 'credentialMissing', 'missing'],
    ['Basic', { authorization: 'Basic dXNlcjpwYXNz' }, undefined, 'credentialInvalid', 'not_bearer'],
    ['malformed', { authorization: 'Bearer two words' }, undefined, 'credentialInvalid', 'malformed'],
    ['two headers', { authorization: 'Bearer a' }, ['Authorization', 'Bearer a', 'authorization', 'Bearer b'], 'credentialInvalid', 'duplicate'],
  ];
  for (const [what, headers, raw, problem, reason] of cases) {
    const { request, error } = await run(headers, raw);
    t.type(error, Problem, what);
    t.match(error, { problem, reason }, what);
    t.equal(request.principal, null, `${what}: no principal`);
    t.same(request.authDecision, { kind: 'none', outcome: 'denied', reason }, what);
  }
  t.same(decisions.map((d) => d[2]), ['missing', 'not_bearer', 'malformed', 'duplicate']);
});

t.test('a refused credential: 401 with a detail that says why, without the credential', async (t) => {
  const { run, decisions } = setup({
    expired: { ok: false, kind: 'jwt', reason: 'expired_token' },
    'agk_revoked': { ok: false, kind: 'api_key', reason: 'unknown_key' },
    'agk_live': { ok: false, kind: 'api_key', reason: 'wrong_environment', environment: 'production' },
  });
  const expired = await run({ authorization: 'Bearer expired' });
  t.match(expired.error, { problem: 'credentialInvalid', reason: 'expired_token', detail: /expired; log in again/ });
  const unknown = await run({ authorization: 'Bearer agk_revoked' });
  t.match(unknown.error, { problem: 'credentialInvalid', reason: 'unknown_key', detail: /invalid, expired or revoked/ });
  t.notOk((unknown.error as Problem).detail?.includes('agk_revoked'));
  const production = await run({ authorization: 'Bearer agk_live' });
  t.match(production.error, { problem: 'wrongEnvironment', detail: /production environment/ });
  t.same(decisions, [['jwt', 'denied', 'expired_token'], ['api_key', 'denied', 'unknown_key'], ['api_key', 'denied', 'wrong_environment']]);
});

t.test('the store does not answer: the decision is an error of the kind the token looks like, and the answer a 503', async (t) => {
  const { run, decisions } = setup({ 'agk_any': 'store-down', 'eyJ.jwt.sig': 'store-down' });
  for (const token of ['agk_any', 'eyJ.jwt.sig']) {
    const { request, error } = await run({ authorization: `Bearer ${token}` });
    t.type(error, StoreUnavailable, 'rethrown as it came');
    t.equal(toProblem(error as Error).problem, 'storeUnavailable', 'rendered as 503 1503, never a 401');
    t.equal(request.principal, null);
  }
  t.same(decisions, [['api_key', 'error', 'store_unavailable'], ['jwt', 'error', 'store_unavailable']]);
});
