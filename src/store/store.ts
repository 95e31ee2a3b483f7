/**
 * The contract every credential store keeps: the embedded memory store and the Redis store.
 * Each method is one atomic step (one Lua script or MULTI/EXEC in Redis), named by what it
 * means, so route and service code never does get-then-set. Writes that revoke something
 * return what they revoked, so the caller can invalidate caches on every replica.
 *
 * The contract is split by concern: organizations here, api-keys.ts, sessions.ts, counters.ts,
 * audit.ts, rate-limits.ts, tenant-limits.ts, organization-listing.ts, password-resets.ts, mfa.ts, passkeys.ts, usage.ts, quotas.ts; each store implements
 * each part in a module of its own (memory/*.ts, redis/*.ts).
 */
import type { ApiKeyStore } from './api-keys.js';
import type { SessionStore } from './sessions.js';
import type { CounterStore } from './counters.js';
import type { AuditStore } from './audit.js';
import type { RateLimitStore } from './rate-limits.js';
import type { TenantLimitStore } from './tenant-limits.js';
import type { OrganizationListing } from './organization-listing.js';
import type { PasswordResetStore } from './password-resets.js';
import type { OrganizationProfileStore } from './organization-profiles.js';
import type { MfaStore } from './mfa.js';
import type { PasskeyStore } from './passkeys.js';
import type { ExternalIdStore } from './external-ids.js';
import type { UsageStore } from './usage.js';
import type { QuotaStore } from './quotas.js';
import type { OrganizationPlanStore } from './organization-plans.js';
import type { KeyQuotaStore } from './key-quotas.js';
import type { InvitationStore, MemberStore } from './members.js';
import type { MemberPasswordStore } from './member-passwords.js';

export type Organization = Readonly<{
  id: string;
  name: string;
  /** Normalized: trimmed and lower-cased. */
  email: string;
  passwordHash: string;
  createdAt: string;
}>;

export type NewOrganization = Organization;

// The parts of the contract, one module per concern; importers may keep naming store.ts.
export * from './api-keys.js';
export * from './sessions.js';
export * from './counters.js';

/**
 * Something a write made invalid. `cacheKey` is what the credential cache keys it by:
 * the key's hash for an API key, the session id for a session. `rate_limits` is no credential:
 * the rate-limit overrides changed (its cacheKey is the organization's id), and every replica
 * reads them again (store/rate-limits.ts); credential caches pass it by. `profile` is no credential
 * either: the organization cacheKey's name or e-mail changed (store/organization-profiles.ts), and
 * every replica forgets what it kept of them (the identity assertion's profiles). `created`: an API
 * key that now exists (issue 45): nothing is revoked, but a replica that remembers it as unknown
 * forgets that; on the wire an `api_key` item with `"created":true`, which a replica of an older
 * build reads as a revocation of a key it holds nothing of. `plan` is the organization cacheKey's
 * plan (store/organization-plans.ts): every replica reads the plans again. `organization`: the
 * organization cacheKey is deleted (or its external ids changed), and the provider tokens resolved
 * to it (issue 49, credentials/issuer-tokens.ts) are refused at once.
 */
export type Revoked = Readonly<{ kind: 'api_key' | 'session' | 'rate_limits' | 'profile' | 'plan' | 'key_quota' | 'organization'; cacheKey: string; created?: true }>;

export interface OrganizationStore {
  /** Creates the organization unless its (normalized) e-mail is taken. */
  createOrganizationIfEmailFree(org: NewOrganization): Promise<Organization | 'email-taken'>;
  findOrganizationByEmail(email: string): Promise<Organization | undefined>;
  findOrganizationById(orgId: string): Promise<Organization | undefined>;
  /** Deletes the organization with all its keys and sessions; undefined when there was none. */
  deleteOrganization(orgId: string): Promise<Revoked[] | undefined>;
}

/** The credential store: organizations, their API keys and sessions, and the store's own health. */
export interface Store extends OrganizationStore, ApiKeyStore, SessionStore {
  /** Resolves when the store can answer; throws StoreUnavailable otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Thrown by any Store method that could not reach its backend in time. It becomes a 503,
 * never a 401 or a 200: a credential the gateway could not check is not a bad credential.
 */
export class StoreUnavailable extends Error {
  constructor(message = 'credential store unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailable';
  }
}

/**
 * Everything the gateway asks of its store, one part per concern: credentials, counters, the
 * audit trail, rate limits, tenant limits, the organization listing. A new concern is a new part
 * here, one module per store implementing it (memory/, redis/) and its contract tests
 * (docs/architecture.md, "Adding a store concern").
 */
export type GatewayStore = Store & CounterStore & AuditStore & RateLimitStore & TenantLimitStore & OrganizationListing & PasswordResetStore & OrganizationProfileStore & MfaStore & PasskeyStore & UsageStore & QuotaStore & OrganizationPlanStore & KeyQuotaStore & ExternalIdStore & MemberStore & InvitationStore & MemberPasswordStore;
