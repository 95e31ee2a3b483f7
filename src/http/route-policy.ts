import fp from 'fastify-plugin';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { createAuthorize } from '../authz/authorize.js';
import { createAuthenticate } from '../credentials/authenticate.js';
import type { DecisionRecorder } from '../credentials/decisions.js';
import type { CredentialResolver } from '../credentials/resolver.js';

/**
 * Fixes each route's pipeline once, when the route is declared: from its `config.auth`, the
 * authenticate and authorize stages as onRequest hooks (so a refused request's body is never
 * read). A route without `config.auth` is refused at start: nothing is public by accident.
 */
async function routePolicy(app: FastifyInstance, opts: { resolver: CredentialResolver; record: DecisionRecorder }) {
  const authenticate = createAuthenticate(opts.resolver, opts.record);
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (auth === undefined) throw new Error(`route ${route.method} ${route.url} declares no config.auth`);
    if (auth === 'none') return;
    const stages: onRequestAsyncHookHandler[] = [authenticate];
    const authorize = createAuthorize(auth);
    if (authorize !== undefined) stages.push(authorize);
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...stages, ...existing] as typeof route.onRequest;
  });
}

export default fp(routePolicy, { name: 'authgate-route-policy' });
