/**
 * What the edge decider (decider.ts) is given, and what one decision carries from step to step:
 * apart so that the decision's steps (decider.ts), its limits (decider-limits.ts) and its
 * outcomes (decider-outcomes.ts) read the same two types without importing one another's code.
 */
import type { PlanLookup } from '../plans/organization-plans.js';
import type { AuthDecision, DecisionRecorder } from '../credentials/decisions.js';
import type { Principal } from '../credentials/principal.js';
import type { CredentialResolver } from '../credentials/resolver.js';
import type { IdentityAsserter } from '../identity/assertion.js';
import type { RateLimiter } from '../limits/limiter.js';
import type { RateLimitPolicy } from '../limits/policy.js';
import type { QuotaGate } from '../limits/quota-check.js';
import type { CompiledRoute, RouteTable, RouteTableSource } from '../route-table/types.js';
import type { UsageNote } from '../services/usage-recorder.js';
import type { EdgeDecision, EdgeRequest } from './decision.js';
import type { EdgeRecorder } from './record.js';
import type { SpeedTricks } from './speed-tricks.js';

export type EdgeDeciderDeps = Readonly<{
  /** The live route table (route-table/live.ts): read once per decision. */
  routes: RouteTableSource;
  resolver: CredentialResolver;
  /** authgate_auth_decisions_total (observability/instrumentation.ts). */
  recordDecision: DecisionRecorder;
  /** lastUsedAt of an allowed API key (services/key-usage.ts). */
  noteKeyUse: (principal: Principal) => void;
  /** The credential's limit and the public port's limiter: one budget for both ports. */
  rateLimits: Readonly<{ policy: RateLimitPolicy; limiter: RateLimiter }>;
  /** The routes' own limits' limiter, the public port's (limits/route-limit.ts). */
  routeLimiter: RateLimiter;
  /** The organizations' plans (plans/organization-plans.ts): a credential holds its scopes within its plan's. */
  plans: PlanLookup;
  /** authgate_rate_limit_refusals_total, as the public port counts its 429s. */
  onRateLimited: () => void;
  /** The plan's quota (limits/quota-check.ts), the public port's keeper: one count for both ports. */
  quota: QuotaGate;
  /** Usage figures (services/usage-recorder.ts): each credentialed decision's outcome. */
  noteUsage: UsageNote;
  /** Signs x-authgate-identity; undefined when AUTHGATE_IDENTITY_ASSERTION=off. */
  identity: IdentityAsserter | undefined;
  /** AUTHGATE_AUTHZ_CACHE_SECONDS: how long a proxy may keep an allow (0: no-store). */
  cacheSeconds: number;
  /** The metric and access line of each decision (record.ts). */
  record: EdgeRecorder;
  /** AUTHGATE_AUTHZ_SPEED_TRICKS_OFF (speed-tricks.ts): here, whether allows are kept (kept-allows.ts). */
  speedTricks: SpeedTricks;
  /** A fault that is no refusal (answered 500): logged once, with nothing the client sent. */
  onFault: (error: unknown) => void;
}>;

/** What one decision has learnt so far: for its refusal's headers, its metric and its access line. */
export type DecisionContext = {
  readonly request: EdgeRequest;
  readonly startedAt: number;
  table: RouteTable | undefined;
  route: CompiledRoute | undefined;
  principal: Principal | null;
  auth: AuthDecision | undefined;
  /** ratelimit-policy and ratelimit, once a limit counted this request. */
  rateHeaders: Record<string, string> | undefined;
  /** A refusal's reason for the access line when no credential check made one (identity_header, method_override). */
  refusalReason: string | undefined;
};

/** A step's result: the decision now on a warm path, a promise when it waits on the store or a signer. */
export type Step = EdgeDecision | Promise<EdgeDecision>;

/** `f(value)` now when the value is there, after it when it is a promise: no extra turn on a warm path. */
export function then<T>(value: T | Promise<T>, f: (resolved: T) => Step): Step {
  return value instanceof Promise ? value.then(f) : f(value);
}
