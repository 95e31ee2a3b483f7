/**
 * The profile part of the store contract (issue 31): changing an organization's name and e-mail.
 * Implemented by memory/organization-profiles.ts and redis/organization-profiles.ts.
 *
 * E-mails stay unique across the whole store by the claim sign-up uses (createOrganizationIfEmailFree):
 * the new e-mail is claimed first, the record changed after, the old claim released last, so two
 * changes (or a change and a sign-up) racing for one address have exactly one winner and a crash
 * between the steps never leaves an address that finds the wrong organization.
 */
import type { Organization, Revoked } from './store.js';

export type ProfileChange = Readonly<{
  /** The new name (trimmed by the caller); absent: unchanged. */
  name?: string;
  /** The new e-mail, normalized by the caller; absent or equal to the current one: unchanged. */
  email?: string;
  /**
   * With an e-mail change, every login session of the organization ends but this one (the
   * caller's own, a session id; absent: every one ends, as for the admin API).
   */
  keepSessionId?: string;
}>;

export type ProfileChanged = Readonly<{
  /** The organization as it is now. */
  organization: Organization;
  /** Its name and e-mail before the change. */
  previous: Readonly<{ name: string; email: string }>;
  /**
   * What the change made invalid: `{kind: 'profile', cacheKey: orgId}` (every replica forgets the
   * name and e-mail it kept for the organization) and the sessions an e-mail change ended. The
   * Redis store has announced it already; the caller applies it locally.
   */
  revoked: Revoked[];
}>;

export interface OrganizationProfileStore {
  /**
   * Changes the name and/or e-mail in one step as seen from outside: undefined when there is no
   * such organization; 'email-taken' when another organization holds (or is taking) the e-mail;
   * 'conflict' when the organization's own e-mail changed meanwhile (a concurrent change of it).
   */
  changeOrganizationProfile(orgId: string, change: ProfileChange): Promise<ProfileChanged | 'email-taken' | 'conflict' | undefined>;
}
