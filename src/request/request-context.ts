import type { CompiledRoute, RouteTable } from '../route-table/types.js';
import type { AuthDecision } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import type { ForwardedMethods } from './refusals.js';

/**
 * What a route needs of a request's credential: none; any credential holding `config.scope`; a
 * login token; or, on the public port's catch-all, whatever the route table's matched route says
 * (proxy/forward.ts).
 */
export type CredentialRequirement = 'none' | 'any' | 'login-token' | 'route-table';

/** What a request carries through the pipeline, and what each route declares it needs. */
declare module 'fastify' {
  interface FastifyRequest {
    /** Set by credentials/authenticate.ts; null on routes that need no credential. */
    principal: Principal | null;
    authDecision: AuthDecision | null;
    /** The signed identity sent upstream with a forwarded request (identity/assertion.ts); null otherwise. */
    identityAssertion: string | null;
    /** performance.now() when a forwarded request left for the upstream; 0 otherwise. */
    upstreamStartedAt: number;
    /** The gateway's RateLimit headers are on the answer (limits/enforce.ts): the upstream's own give way. */
    rateLimited: boolean;
    /** The route table's route a forwarded request matched, and the table it was read from (once per request); null otherwise. */
    forwardedRoute: CompiledRoute | null;
    routeTable: RouteTable | null;
  }
  interface FastifyInstance {
    /** The public port's catch-all: the methods the route table forwards on a path (request/refusals.ts). */
    forwardedMethods?: ForwardedMethods;
  }
  interface FastifyContextConfig {
    auth?: CredentialRequirement;
    /**
     * The scope an 'any' route needs (authz/scopes.ts); required there, refused at start if
     * missing. null says, on purpose, that any credential will do (GET /auth/scopes).
     */
    scope?: string | null;
    /** The template used in metrics and logs: never the raw path. */
    routeLabel?: string;
  }
}

export {};
