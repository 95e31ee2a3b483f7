// Organizations: sign-up (password hashed), lookup and deletion with everything they hold.
import { randomUUID } from 'node:crypto';
import type { PasswordPolicy } from '../credentials/password-policy.js';
import type { PasswordHasher } from '../credentials/passwords.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { BadOrganizationCursor, decodeCursor, type OrganizationListing, type OrganizationQuery } from '../store/organization-listing.js';
import type { Organization, Store } from '../store/store.js';
import type { TenantLimitStore } from '../store/tenant-limits.js';
import type { RateLimitService } from './rate-limits.js';
import { NO_PASSWORD_HASH } from './password-changes.js';
import type { ExternalIdChange, ExternalIds, ExternalIdStore } from '../store/external-ids.js';
import type { OrganizationPlans } from '../plans/organization-plans.js';
import type { RouteTableSource } from '../route-table/types.js';

export type OrganizationView = Readonly<{
  id: string;
  name: string;
  email: string;
  createdAt: string;
  /** Its own rate limit (`600/60s`, or `off`); null: the default applies. */
  rateLimit: string | null;
  /** What its credentials get without a key limit of their own; null: no limit. */
  effectiveRateLimit: string | null;
  /** Its own API-key limit; null: AUTHGATE_MAX_KEYS_PER_ORGANIZATION applies. */
  keyLimit: number | null;
  /** Its id at each trusted issuer (issue 49), only when it has one. */
  externalIds?: ExternalIds;
  /** How many API keys it may hold. */
  effectiveKeyLimit: number | null;
  /** With plans in the routes file only (issue 47): its own plan; null: the file's defaultPlan. */
  plan?: string | null;
  /** With plans only: the plan its requests are decided by (null: none, every scope). */
  effectivePlan?: string | null;
}>;

/** An e-mail as stored and compared: normalizeEmail's output, so nothing normalizes twice. */
export type NormalizedEmail = string & { readonly normalized: unique symbol };

/** Trimmed and lower-cased: e-mails compare case-insensitively everywhere. */
export function normalizeEmail(email: string): NormalizedEmail {
  return email.trim().toLowerCase() as NormalizedEmail;
}

export function createOrganizationService(deps: {
  store: Store & TenantLimitStore & OrganizationListing & ExternalIdStore;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  passwords: PasswordHasher;
  /** Applied to every password set here (credentials/password-policy.ts); login never applies it. */
  policy: PasswordPolicy;
  now: () => number;
  rateLimits: RateLimitService;
  /** AUTHGATE_MAX_KEYS_PER_ORGANIZATION; undefined: no default limit. */
  defaultKeyLimit?: number;
  /** The names of the live table's trusted issuers (issue 49): an external id is only set at one of them. */
  issuerNames?: () => ReadonlySet<string> | ReadonlyMap<string, unknown>;
  /** The organizations' plans and the live table that declares them (issue 47). */
  plans?: Readonly<{ lookup: Pick<OrganizationPlans, 'planOf' | 'ownPlan'>; routes: RouteTableSource; forget: (orgId: string) => Promise<void> }>;
}) {
  const { store, bus, passwords, policy, now, rateLimits } = deps;
  const view = async (org: Organization): Promise<OrganizationView> => {
    const keyLimit = (await store.readKeyLimit(org.id)) ?? null;
    const externalIds = await store.readExternalIds(org.id);
    const table = deps.plans?.routes.current();
    const plan = table === undefined || table.plans.size === 0 ? undefined : deps.plans!.lookup.planOf(org.id, table);
    const planned = table !== undefined && table.plans.size > 0 && {
      plan: deps.plans!.lookup.ownPlan(org.id) ?? null,
      effectivePlan: plan?.name ?? null,
    };
    return {
      id: org.id,
      name: org.name,
      email: org.email,
      createdAt: org.createdAt,
      ...rateLimits.organizationView(org.id),
      keyLimit,
      effectiveKeyLimit: keyLimit ?? plan?.maxKeys ?? deps.defaultKeyLimit ?? null,
      ...planned,
      ...(Object.keys(externalIds).length > 0 && { externalIds }),
    };
  };

  return {
    /**
     * Without a password, the organization is created with one nothing verifies against
     * (NO_PASSWORD_HASH): it cannot log in until a reset token (admin API) sets one.
     */
    async create(input: { name: string; email: string; password?: string | undefined }): Promise<OrganizationView> {
      // Before the hash: a refused password costs no argon2 slot.
      if (input.password !== undefined) policy.enforce(input.password, input);
      const org = {
        id: `org_${randomUUID().replaceAll('-', '')}`,
        name: input.name.trim(),
        email: normalizeEmail(input.email),
        passwordHash: input.password === undefined ? NO_PASSWORD_HASH : await passwords.hash(input.password),
        createdAt: new Date(now()).toISOString(),
      };
      const created = await store.createOrganizationIfEmailFree(org);
      if (created === 'email-taken') throw new Problem('emailTaken', 'An organization with this e-mail already exists.');
      return view(created);
    },

    /** A page of organizations (admin/organization-list.ts); the e-mail searched is normalized here. */
    async list(query: OrganizationQuery): Promise<{ organizations: OrganizationView[]; nextCursor: string | null }> {
      // Checked here, before the store: a store turns any failure of its own into 503.
      try {
        if (query.cursor !== undefined) decodeCursor(query.cursor);
      } catch (error) {
        if (error instanceof BadOrganizationCursor) throw new Problem('badRequest', 'The cursor is not the nextCursor of a page of this listing.');
        throw error;
      }
      const page = await store.listOrganizations(query.email === undefined ? query : { ...query, email: normalizeEmail(query.email) });
      return { organizations: await Promise.all(page.organizations.map(view)), nextCursor: page.nextCursor };
    },

    async get(orgId: string): Promise<OrganizationView> {
      const org = await store.findOrganizationById(orgId);
      if (org === undefined) throw new Problem('organizationNotFound');
      return view(org);
    },

    /**
     * Its own rate limit: `<count>/<window>`, `off` (none, whatever AUTHGATE_RATE_LIMIT says) or
     * null (AUTHGATE_RATE_LIMIT again). Every replica applies it as soon as it hears of it.
     */
    async setRateLimit(orgId: string, rateLimit: string | null): Promise<OrganizationView> {
      const org = await store.findOrganizationById(orgId);
      if (org === undefined) throw new Problem('organizationNotFound');
      await rateLimits.setOrganization(orgId, rateLimit);
      return view(org);
    },

    /** Its own API-key limit, or null for AUTHGATE_MAX_KEYS_PER_ORGANIZATION again. Keys above it stay; no new one until below. */
    async setKeyLimit(orgId: string, keyLimit: number | null): Promise<OrganizationView> {
      if (!(await store.setKeyLimit(orgId, keyLimit))) throw new Problem('organizationNotFound');
      return this.get(orgId);
    },

    /**
     * Its external id at each issuer named (null removes it): unique per issuer across the store
     * (409). Its provider tokens map by the new ids at once here, on other replicas within the
     * credential cache's TTL (a deletion is announced to every replica at once).
     */
    async setExternalIds(orgId: string, change: ExternalIdChange): Promise<OrganizationView> {
      const declared = deps.issuerNames?.() ?? new Set<string>();
      // A removal (null) is taken for any issuer: an id left behind when the operator took its
      // issuer out of the routes file must still be removable.
      const unknown = Object.entries(change).find(([name, id]) => id !== null && !declared.has(name))?.[0];
      if (unknown !== undefined) throw new Problem('unknownIssuer', `No issuer ${unknown} is declared under issuers in the routes file.`);
      const outcome = await store.setExternalIds(orgId, change);
      if (outcome === 'not-found') throw new Problem('organizationNotFound');
      if (typeof outcome.takenAt === 'string') throw new Problem('externalIdTaken', `Another organization has this id at issuer ${outcome.takenAt}.`);
      bus.applyLocally([{ kind: 'organization', cacheKey: orgId }]);
      return this.get(orgId);
    },

    /** Deletes it with every key and session; the store announces them to every replica in the same step. */
    async delete(orgId: string): Promise<{ revoked: number }> {
      const revoked = await store.deleteOrganization(orgId);
      if (revoked === undefined) throw new Problem('organizationNotFound');
      bus.applyLocally(revoked);
      // Its limits go after it: left behind (the store failing now), they name credentials that no longer exist.
      await rateLimits.dropOrganization(orgId).catch(() => {});
      await deps.plans?.forget(orgId);
      // The count is of credentials (keys and sessions), as ever: the organization's own entry is none.
      return { revoked: revoked.filter((r) => r.kind === 'api_key' || r.kind === 'session').length };
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
