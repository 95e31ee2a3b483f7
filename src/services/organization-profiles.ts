/**
 * Changing an organization's name and e-mail (issue 31), for PATCH /auth/organization and the
 * admin API. The store keeps e-mails unique across shards and ends the sessions an e-mail change
 * ends in the same step (store/organization-profiles.ts); this replica applies what it revoked at
 * once (the profile the identity assertion kept, the sessions), the other replicas hear it on the bus.
 */
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { OrganizationProfileStore } from '../store/organization-profiles.js';
import type { Organization, OrganizationStore } from '../store/store.js';
import { normalizeEmail } from './organizations.js';

export type ProfileOutcome = Readonly<{
  organization: Organization;
  nameChanged: boolean;
  emailChanged: boolean;
  /** The e-mail before the change (for the notice of an e-mail change: never logged, never stored in the trail). */
  previousEmail: string;
  /** Login sessions an e-mail change ended. */
  sessionsEnded: number;
}>;

/** An e-mail's domain, as the audit trail may name it: the part after the last `@`. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

export function createProfileService(deps: { store: OrganizationProfileStore & Pick<OrganizationStore, 'findOrganizationById'>; bus: Pick<InvalidationBus, 'applyLocally'> }) {
  const { store, bus } = deps;
  return {
    /** The organization as the store holds it now (404 when gone). */
    async current(orgId: string): Promise<Organization> {
      const org = await store.findOrganizationById(orgId);
      if (org === undefined) throw new Problem('organizationNotFound');
      return org;
    },

    /**
     * Sets the name (trimmed) and/or e-mail (normalized). With an e-mail change, every login
     * session but `keepSessionId` ends. 404, 409 1303 (taken), 409 1224 (a concurrent e-mail change).
     */
    async change(orgId: string, change: { name?: string | undefined; email?: string | undefined }, keepSessionId?: string): Promise<ProfileOutcome> {
      const name = change.name?.trim();
      const email = change.email === undefined ? undefined : normalizeEmail(change.email);
      const result = await store.changeOrganizationProfile(orgId, {
        ...(name !== undefined && { name }),
        ...(email !== undefined && { email }),
        ...(keepSessionId !== undefined && { keepSessionId }),
      });
      if (result === undefined) throw new Problem('organizationNotFound');
      if (result === 'email-taken') throw new Problem('emailTaken', 'An organization with this e-mail already exists.');
      if (result === 'conflict') throw new Problem('profileChangeConflict', "The organization's e-mail was changed by another request at the same moment; nothing was changed. Read it again and retry.");
      bus.applyLocally(result.revoked);
      const { organization, previous } = result;
      return {
        organization,
        nameChanged: organization.name !== previous.name,
        emailChanged: organization.email !== previous.email,
        previousEmail: previous.email,
        sessionsEnded: result.revoked.filter((r) => r.kind === 'session').length,
      };
    },
  };
}

export type ProfileService = ReturnType<typeof createProfileService>;
