import fp from 'fastify-plugin';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { createAuthorize, type AuthorizeHook } from '../authz/authorize.js';
import { createAuthenticate } from '../credentials/authenticate.js';
import type { DecisionRecorder } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import type { CredentialResolver } from '../credentials/resolver.js';

/**
 * Fixes each route's pipeline once, when the route is declared: from its `config.auth` (and
 * `config.scope`, which a route open to API keys must name), the authenticate and authorize
 * stages as onRequest hooks (so a refused request's body is never read). A route without
 * `config.auth`, or open to API keys without a scope, is refused at start: nothing is public, or
 * open to every key, by accident; `scope: null` opens an 'any' route to every credential on purpose.
 */
async function routePolicy(app: FastifyInstance, opts: { resolver: Pick<CredentialResolver, 'resolve'>; record: DecisionRecorder; noteKeyUse: (principal: Principal) => void }) {
  const authenticate = createAuthenticate(opts.resolver, opts.record, opts.noteKeyUse);
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (auth === undefined) throw new Error(`route ${route.method} ${route.url} declares no config.auth`);
    // 'route-table': the catch-all authenticates and authorizes by the route it matched (proxy/forward.ts).
    if (auth === 'none' || auth === 'route-table') return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    if (auth === 'any' && route.config?.scope === null) {
      route.onRequest = [authenticate, ...existing] as typeof route.onRequest;
      return;
    }
    let authorize;
    try {
      authorize = createAuthorize(auth, route.config?.scope ?? undefined);
    } catch (error) {
      throw new Error(`route ${String(route.method)} ${route.url}: ${(error as Error).message}`);
    }
    const stages: (onRequestAsyncHookHandler | AuthorizeHook)[] = [authenticate, authorize];
    route.onRequest = [...stages, ...existing] as typeof route.onRequest;
  });
}

export default fp(routePolicy, { name: 'authgate-route-policy' });
