/**
 * The Redis store's profile changes (store/organization-profiles.ts). An e-mail change crosses
 * tags as sign-up does, in three steps ordered so that a crash between them is harmless:
 * 1. claim the new e-mail under its tag, marked pending (email-claims.ts): of racing claims, one wins;
 * 2. change the record under the organization's tag (changeOrganizationProfile.lua, which also
 *    ends the other sessions and announces it), only while it still holds the e-mail read before;
 * 3. release the old e-mail's claim, only while it still names the organization.
 * Cut off after 1, the new claim names an organization whose record holds another e-mail: it finds
 * nothing, and once its pending mark is gone the next claim of that e-mail releases it. Cut off
 * after 2, the old claim is in the same state, without a mark. Neither ever finds the wrong
 * organization, and the old e-mail logs in until step 2, the new one from then on.
 */
import type { OrganizationProfileStore } from '../organization-profiles.js';
import { shardTagOf } from '../shard-tag.js';
import type { Revoked } from '../store.js';
import type { RedisStoreContext } from './context.js';
import { createEmailClaims } from './email-claims.js';
import { createOrganizationIndex } from './organization-index.js';
import { unexpected } from './replies.js';
import { describe } from './support.js';

export function redisOrganizationProfiles(context: RedisStoreContext): OrganizationProfileStore {
  const { client, keys, run, logger, announced, guard, durably, organizationPlace, organizationRecord, readOrganization } = context;
  const claims = createEmailClaims(context);
  const index = createOrganizationIndex({ client, keys, readOrganization, findOrganizationByEmail: claims.find });

  return {
    changeOrganizationProfile: (orgId, change) =>
      guard('changeOrganizationProfile', async () => {
        const org = await readOrganization(orgId);
        if (org === undefined) return undefined;
        const email = change.email !== undefined && change.email !== org.email ? change.email : undefined;
        const name = change.name ?? org.name;
        const written = [organizationRecord(orgId), ...(email === undefined ? [] : [claims.claimKey(email)])];
        return durably(written, async () => {
          if (email !== undefined && !(await claims.claim(email, orgId, true))) return 'email-taken' as const;
          // Listed before written (organization-index.ts): the index never lacks an organization.
          await index.add({ id: orgId, name, email: email ?? org.email });
          const { shard, packed } = organizationPlace(orgId);
          const tag = shardTagOf(orgId);
          const keep = change.keepSessionId !== undefined && change.keepSessionId.startsWith(`${tag}.`) ? change.keepSessionId.slice(tag.length + 1) : '';
          const reply = await announced((channel, head) =>
            run.changeOrganizationProfile(
              [organizationRecord(orgId), shard.organizationSessions(packed), shard.organizationSessionInfo(packed), shard.sessions],
              [orgId, email === undefined ? '' : org.email, change.name ?? '', email ?? '', keep, tag, channel, head],
            ),
          );
          if (reply === 0 || (Array.isArray(reply) && reply[0] === 'conflict')) {
            // The new claim goes back, unless the record holds that e-mail now (the same change, twice at once).
            const now = Array.isArray(reply) ? reply[1] : undefined;
            if (email !== undefined && now !== email) await claims.release(email, orgId);
            return reply === 0 ? undefined : ('conflict' as const);
          }
          if (!Array.isArray(reply) || reply[0] !== 'changed' || reply.some((item) => typeof item !== 'string')) throw unexpected('changeOrganizationProfile');
          const [, previousName, previousEmail, ...ended] = reply as string[];
          if (email !== undefined) {
            // Committed and announced: a claim left behind finds nothing and is released by the
            // next claim of the e-mail, so a failure here must not turn the answer into an error.
            await claims.release(previousEmail!, orgId).catch((error: unknown) => {
              logger?.warn({ event: 'redis_email_release_failed', error: describe(error) }, 'the previous e-mail stays claimed until its next claim');
            });
          }
          const revoked: Revoked[] = [{ kind: 'profile', cacheKey: orgId }, ...ended.map((cacheKey): Revoked => ({ kind: 'session', cacheKey }))];
          return { organization: { ...org, name, email: email ?? org.email }, previous: { name: previousName!, email: previousEmail! }, revoked };
        });
      }),
  };
}
