/**
 * The id an organization has at each trusted issuer (issue 49): what maps a provider token's
 * organization claim to the organization. Unique per issuer across the store: one external id at
 * an issuer names one organization at most. Gone with the organization.
 */
export type ExternalIds = Readonly<Record<string, string>>;

export type ExternalIdChange = Readonly<Record<string, string | null>>;

export interface ExternalIdStore {
  /**
   * Sets (a string) or removes (null) the organization's external id at each issuer named: its
   * external ids after, 'not-found' when there is no such organization, or the first issuer
   * whose id another organization holds (nothing of the change is kept then).
   */
  setExternalIds(orgId: string, change: ExternalIdChange): Promise<ExternalIds | 'not-found' | Readonly<{ takenAt: string }>>;
  /** Its external ids ({} for none or no such organization). */
  readExternalIds(orgId: string): Promise<ExternalIds>;
  /** The organization whose external id at `issuer` is `externalId`, while it exists. */
  findOrganizationIdByExternalId(issuer: string, externalId: string): Promise<string | undefined>;
}
