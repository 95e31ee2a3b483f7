import type { Scope } from '../authz/scopes.js';
import type { CredentialRequirement } from '../config/forwarded-routes.js';
import type { AuthDecision } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';

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
  }
  interface FastifyContextConfig {
    auth?: CredentialRequirement;
    /**
     * The scope an 'any' route needs (authz/scopes.ts); required there, refused at start if
     * missing. null says, on purpose, that any credential will do (GET /auth/scopes).
     */
    scope?: Scope | null;
    /** The template used in metrics and logs: never the raw path. */
    routeLabel?: string;
  }
}

export {};
