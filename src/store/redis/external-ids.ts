/**
 * The Redis store's external ids (store/external-ids.ts). Two kinds of key, as for e-mails
 * (email-claims.ts): a claim per (issuer, external id) under its own shard tag (`<base>x:<issuer>:<id>`
 * → organization id), which keeps an id unique across every shard, and the organization's own
 * hash under its tag (`<base>xi:<packed id>`, issuer → id). A claim counts only while the
 * organization it names exists and its own hash holds that id: a claim a cut-off step or a
 * deletion left behind finds nothing, and the next claim of the id releases it.
 */
import type { ExternalIdStore } from '../external-ids.js';
import { shardTagOf } from '../shard-tag.js';
import type { RedisStoreContext } from './context.js';

export function externalIdsKey(context: Pick<RedisStoreContext, 'organizationPlace'>, orgId: string): string {
  const { shard, packed } = context.organizationPlace(orgId);
  return `${shard.base}xi:${packed}`;
}

export function redisExternalIds(context: RedisStoreContext): ExternalIdStore {
  const { client, keys, run, guard, readOrganization } = context;
  const claimKey = (issuer: string, externalId: string) => `${keys.shard(shardTagOf(`${issuer}\n${externalId}`)).base}x:${issuer}:${externalId}`;
  const own = (orgId: string) => externalIdsKey(context, orgId);

  /** The organization a claim names, while the claim is live (its organization exists and holds the id). */
  async function holderOf(issuer: string, externalId: string): Promise<string | undefined> {
    const holder = await client.get(claimKey(issuer, externalId));
    if (holder === null) return undefined;
    if ((await client.hget(own(holder), issuer)) !== externalId || (await readOrganization(holder)) === undefined) return undefined;
    return holder;
  }

  /** Claims the id for orgId: true when it is orgId's; a left-over claim is released and tried again. */
  async function claim(issuer: string, externalId: string, orgId: string): Promise<boolean> {
    const key = claimKey(issuer, externalId);
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await client.set(key, orgId, 'NX')) === 'OK') return true;
      const holder = await client.get(key);
      if (holder === null) continue;
      if (holder === orgId) return true;
      if ((await holderOf(issuer, externalId)) !== undefined) return false;
      await run.releaseEmail([key], [holder]); // a claim left over: released only while it names the same holder
    }
    return false;
  }

  async function read(orgId: string): Promise<Record<string, string>> {
    return client.hgetall(own(orgId));
  }

  return {
    setExternalIds: (orgId, change) =>
      guard('setExternalIds', async () => {
        if ((await readOrganization(orgId)) === undefined) return 'not-found';
        const before = await read(orgId);
        const claimed: [string, string][] = [];
        for (const [issuer, externalId] of Object.entries(change)) {
          if (externalId === null || before[issuer] === externalId) continue;
          if (!(await claim(issuer, externalId, orgId))) {
            for (const [i, id] of claimed) await run.releaseEmail([claimKey(i, id)], [orgId]);
            return { takenAt: issuer };
          }
          claimed.push([issuer, externalId]);
        }
        for (const [issuer, externalId] of Object.entries(change)) {
          if (externalId === null) await client.hdel(own(orgId), issuer);
          else await client.hset(own(orgId), issuer, externalId);
          const previous = before[issuer];
          if (previous !== undefined && previous !== externalId) await run.releaseEmail([claimKey(issuer, previous)], [orgId]);
        }
        return read(orgId);
      }),

    readExternalIds: (orgId) => guard('readExternalIds', () => read(orgId)),

    findOrganizationIdByExternalId: (issuer, externalId) => guard('findOrganizationIdByExternalId', () => holderOf(issuer, externalId)),
  };
}
