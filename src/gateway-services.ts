// What the composition root (gateway.ts) builds over the store: the services the routes call (sessions,
// organizations, keys, members, passwords, the second factor), the audit trail and its notices, the
// plans, the rate limits and quotas with their limiters, and the identity asserter, in the order
// they need one another. Apart so gateway.ts reads as the order of the start, and the servers'
// wiring (gateway-servers.ts) takes them as one object.
import { randomUUID } from 'node:crypto';
import type { Config } from './config/config.js';
import type { TokenService } from './credentials/jwt.js';
import { createSecretBox } from './credentials/mfa-secrets.js';
import { createPasswordPolicy } from './credentials/password-policy.js';
import { createPasswordHasher } from './credentials/passwords.js';
import { createAuditTrail } from './audit/trail.js';
import { actorCompletion } from './audit/actor-details.js';
import { concernedMembers } from './notices/member-concerned.js';
import { createNoticeDelivery, type DeliveryTuning } from './notices/delivery.js';
import { withNotices } from './notices/noticing-trail.js';
import { createSecondFactorBound } from './guards/second-factor-bound.js';
import { createTenantGrowth } from './guards/tenant-growth.js';
import { createRateLimiter } from './limits/limiter.js';
import { createRateLimitPolicy } from './limits/policy.js';
import type { Logger } from './observability/logging.js';
import type { Metrics } from './observability/metrics.js';
import { createOrganizationPlans } from './plans/organization-plans.js';
import type { LiveRouteTable } from './route-table/live.js';
import { createApiKeyService } from './services/api-keys.js';
import { createKeyUsageTracker } from './services/key-usage.js';
import { createMemberService } from './services/members.js';
import { createMfaService } from './services/mfa.js';
import { createPlanService } from './services/organization-plans.js';
import { createProfileService } from './services/organization-profiles.js';
import { createOrganizationService } from './services/organizations.js';
import { createPasskeyService } from './services/passkeys.js';
import { createPasswordChangeService } from './services/password-changes.js';
import { createRateLimitService } from './services/rate-limits.js';
import { createSessionService } from './services/sessions.js';
import type { InvalidationBus } from './store/invalidation.js';
import type { GatewayStore } from './store/store.js';
import { traced, type Tracing } from './tracing/tracing.js';
import { buildIdentity } from './gateway-parts.js';
import { buildQuotaParts } from './gateway-quotas.js';

export type ServiceInputs = Readonly<{
  config: Config;
  /** The instrumented store and bus (observability/instrumentation.ts). */
  store: GatewayStore;
  bus: InvalidationBus;
  tokens: TokenService;
  routes: LiveRouteTable;
  upstreamUrl: string;
  tracing: Tracing | undefined;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
  /** GatewayDeps' timings a test shortens (gateway.ts). */
  keyUseFlushMs: number | undefined;
  noticeTuning: Partial<DeliveryTuning> | undefined;
  usageFlushMs: number | undefined;
}>;

export type GatewayServices = Awaited<ReturnType<typeof buildServices>>;

export async function buildServices(inputs: ServiceInputs) {
  const { config, store, bus, tokens, routes, upstreamUrl, tracing, logger, metrics, now } = inputs;
  // The argon2 queue is this gateway's: a burst on one gateway never queues another's logins.
  const passwords = traced(createPasswordHasher(), tracing, { hash: 'argon2.hash', verify: 'argon2.verify' });
  const growth = createTenantGrowth(store, config.tenantLimits);
  const sessions = await createSessionService({ store, bus, tokens, passwords, now, growth, members: store });
  const trail = createAuditTrail({ store, retention: config.audit, now, logger, onWriteFailed: (events) => metrics.auditWriteFailures.inc(events), completeActors: actorCompletion(store) });
  const notices = config.notices && createNoticeDelivery({
    ...config.notices,
    organization: async (orgId) => {
      const org = await store.findOrganizationById(orgId);
      return org && { id: org.id, name: org.name, email: org.email };
    },
    member: concernedMembers(store),
    now,
    logger,
    count: (outcome) => metrics.notices.inc({ outcome }),
    tuning: inputs.noticeTuning,
  });
  const audit = notices === undefined ? trail : withNotices(trail, notices, now);
  const keyUsage = createKeyUsageTracker({ store, now, logger, flushIntervalMs: inputs.keyUseFlushMs });

  // Plans (issue 47): which organizations have a plan of their own, in memory (read again when announced).
  const plans = await createOrganizationPlans({ store, bus, logger, onFallback: (plan) => metrics.planFallbacks.inc({ plan }) });
  // Rate limits: the overrides in memory (read again when announced), budget leased per credential.
  const rateLimits = await createRateLimitPolicy({
    store,
    bus,
    defaultLimit: config.rateLimit.default,
    logger,
    planLimit: (orgId) => plans.planOf(orgId, routes.current())?.rateLimit,
  });
  const replica = randomUUID();
  // The leases of both limiters are children of the request's span (tracing on only).
  const leaseStore = traced(store, tracing, { leaseRateBudget: 'rate_limit.lease' });
  const limiter = createRateLimiter({ store: leaseStore, replica, now, onLease: (outcome) => metrics.rateLimitLeases.inc({ outcome }) });
  // The routes' own limits (a routes file's `rateLimit`): windows of their own, leased the same way.
  const routeLimiter = createRateLimiter({ store: leaseStore, replica, now, onLease: (outcome) => metrics.rateLimitLeases.inc({ outcome }) });
  const limitOverrides = createRateLimitService({ store, policy: rateLimits });
  // Built here, at start: the blocklist is read once, and a missing one stops the start.
  const policy = createPasswordPolicy(config.passwords);
  // These read the live table only when asked, after the start.
  const liveRoutes = { current: () => routes.current() };
  const planService = createPlanService({ store, plans, routes: liveRoutes });
  const organizations = createOrganizationService({
    store,
    bus,
    passwords,
    policy,
    now,
    rateLimits: limitOverrides,
    defaultKeyLimit: config.tenantLimits.maxKeys,
    plans: { lookup: plans, routes: liveRoutes, forget: planService.forget },
    issuerNames: () => routes.current().issuers,
  });
  const profiles = createProfileService({ store, bus });
  const members = createMemberService({ store, bus, passwords, policy, now });
  const passwordChanges = createPasswordChangeService({ store, bus, passwords, policy, sessions, now, resetTtlMs: config.passwords.resetTtlSeconds * 1000 });
  // The second factor (issue 32). Without a key (production, unset) nothing is sealed: a random
  // one stands in, so that no enrolment exists to need it (the routes refuse enrolment).
  const mfaKey = config.mfa.encryptionKey;
  // Passkeys: offered when the relying party is configured (config/webauthn.ts).
  const passkeys = createPasskeyService({ store, rp: config.webauthn === undefined ? undefined : { ...config.webauthn, name: config.jwt.issuer }, now, logger });
  const mfa = createMfaService({ store, bus, box: createSecretBox(mfaKey ?? randomUUID(), config.mfa.previousKeys), sessions, bound: createSecondFactorBound(store, config.mfa.failureLimit), now, issuer: config.jwt.issuer, passkeys });

  const quotas = await buildQuotaParts({ store, bus, now, logger, metrics, routes, plans, usageFlushMs: inputs.usageFlushMs });
  const apiKeys = createApiKeyService({ store, bus, environment: config.environment, now, pendingUse: keyUsage.pendingUse, rateLimits: limitOverrides, growth, routes, plans, keyQuotas: quotas.keyQuotas });
  const identity = await buildIdentity(config, upstreamUrl, store, now, routes, plans);
  // A changed name or e-mail (and 'all', after a resubscribe): the kept profiles and assertions go, on every replica.
  if (identity !== undefined) bus.onInvalidation((invalidation) => identity.asserter.invalidate(invalidation));

  return {
    sessions,
    audit,
    notices,
    keyUsage,
    plans,
    rateLimits,
    limiter,
    routeLimiter,
    planService,
    organizations,
    profiles,
    members,
    passwordChanges,
    /** Whether AUTHGATE_MFA_ENCRYPTION_KEY is set: enrolment in the second factor is offered only then. */
    mfaEnrolment: mfaKey !== undefined,
    passkeys,
    mfa,
    /** Plans' quotas and usage figures (gateway-quotas.ts). */
    quotas,
    apiKeys,
    /** The identity assertion's keys and signer; undefined when AUTHGATE_IDENTITY_ASSERTION=off. */
    identity,
  };
}
