/**
 * The Redis store's organizations (store.ts OrganizationStore) and their listing index
 * (organization-index.ts). An organization's record is under its own shard tag, its e-mail claim
 * under the e-mail's: the steps that touch both are ordered so a crash between them is harmless.
 */
import { otherMembersFactorKeys } from './member-factors.js';
import type { OrganizationListing } from '../organization-listing.js';
import { shardTagOf } from '../shard-tag.js';
import type { OrganizationStore } from '../store.js';
import type { RedisStoreContext } from './context.js';
import { createEmailClaims } from './email-claims.js';
import { externalIdsKey } from './external-ids.js';
import { createOrganizationIndex } from './organization-index.js';
import { organizationRevocations, unexpected } from './replies.js';
import { describe } from './support.js';

export function redisOrganizations(context: RedisStoreContext): OrganizationStore & OrganizationListing {
  const { client, keys, run, logger, announced, guard, durably, organizationPlace, organizationRecord, readOrganization } = context;

  /** The e-mail → organization claim lives under the e-mail's own tag: any shard (email-claims.ts). */
  const claims = createEmailClaims(context);
  const emailClaim = claims.claimKey;
  const organizationIndex = createOrganizationIndex({ client, keys, readOrganization, findOrganizationByEmail: claims.find });

  return {
    /**
     * Two steps on two shards, in an order that keeps them safe: the organization is written
     * first (under its own tag), then the e-mail claimed (SET NX under the e-mail's tag), so a
     * claim always names an organization that was written. A crash between the two leaves an
     * organization nobody can reach (its id was never returned), never a taken e-mail. A claim
     * naming an organization that is gone was left by a deletion cut off before it released
     * the claim (or one naming an organization that holds another e-mail, by an e-mail change cut
     * off: email-claims.ts): it is released here (only while it still names that organization)
     * and the claim retried. Losing the claim deletes the organization just written.
     */
    createOrganizationIfEmailFree: (org) =>
      guard('createOrganizationIfEmailFree', () => durably([organizationRecord(org.id), emailClaim(org.email)], async () => {
        const { shard, packed } = organizationPlace(org.id);
        const record = shard.organization(packed);
        // Listed before written (organization-index.ts): the index never lacks an organization.
        await organizationIndex.add(org);
        const written = await run.createOrganization([record], [org.name, org.email, org.passwordHash, org.createdAt]);
        // Ids are 128 random bits: a clash is a bug, not a taken e-mail.
        if (written === 'exists') throw new Error('an organization with this id exists');
        if (written !== 'created') throw unexpected('createOrganization');
        if (await claims.claim(org.email, org.id, false)) {
          return { id: org.id, name: org.name, email: org.email, passwordHash: org.passwordHash, createdAt: org.createdAt };
        }
        await client.del(record);
        return 'email-taken';
      })),

    // A claim whose organization is gone (a deletion cut off halfway), or holds another e-mail
    // now (an e-mail change cut off halfway), finds nothing.
    findOrganizationByEmail: (email) => guard('findOrganizationByEmail', () => claims.find(email)),

    findOrganizationById: (orgId) => guard('findOrganizationById', () => readOrganization(orgId)),

    /**
     * One script under the organization's tag deletes it with all it owns and announces the
     * revocations; the e-mail claim, under the e-mail's tag, is released after. Cut off between
     * the two, the claim names a deleted organization: it finds nothing, and the next sign-up
     * with that e-mail releases it (createOrganizationIfEmailFree).
     */
    deleteOrganization: (orgId) =>
      announced((channel, head) => guard('deleteOrganization', () => durably([organizationRecord(orgId)], async () => {
        // Its listing entries are named by its name and e-mail: read before they are gone.
        const listed = await readOrganization(orgId);
        const { shard, packed } = organizationPlace(orgId);
        const tag = shardTagOf(orgId);
        const reply = await run.deleteOrganization(
          [shard.organization(packed), shard.organizationSessions(packed), shard.apiKeys, shard.sessions, shard.organizationSessionInfo(packed)],
          [tag, channel, head, orgId],
        );
        const deleted = organizationRevocations(reply, orgId);
        if (deleted === undefined) return undefined;
        // Its second factor (redis/mfa.ts): after the record, so a crash between leaves only
        // keys no step reads again (every one looks the organization up first).
        await client.del(externalIdsKey(context, orgId), ...(await otherMembersFactorKeys(context, orgId)), shard.organizationTotp(packed), shard.organizationRecoveryCodes(packed), shard.organizationPasskeys(packed), shard.organizationPasskeyRegistration(packed));
        // Its members (redis/members.ts): their e-mail claims, left over now, go with their next claim.
        await client.del(shard.organizationMembers(packed), shard.organizationSessionMembers(packed), shard.organizationInvitations(packed), shard.organizationKeyCreators(packed));
        if (listed !== undefined) {
          // Committed already: an entry left behind is removed by the next listing that meets it.
          await organizationIndex.remove(listed).catch((error: unknown) => {
            logger?.warn({ event: 'redis_organization_index_failed', error: describe(error) }, 'the deleted organization stays in the listing index until a listing meets it');
          });
        }
        if (deleted.email !== '') {
          // The deletion is committed and announced: a claim left behind is repaired by the next
          // sign-up with the e-mail, so a failure here must not turn the answer into an error.
          await run.releaseEmail([emailClaim(deleted.email)], [orgId]).catch((error: unknown) => {
            logger?.warn({ event: 'redis_email_release_failed', error: describe(error) }, 'the deleted organization\'s e-mail stays claimed until its next sign-up');
          });
        }
        return deleted.revoked;
      }))),

    listOrganizations: (query) => guard('listOrganizations', () => organizationIndex.list(query)),
  };
}
