/**
 * The Redis store's organization listing (store/organization-listing.ts). Organizations are spread
 * over shards by id, so listing them needs an index of its own: two sorted sets under one tag
 * ("organizations"), members `<e-mail>\0<id>` and `<lower-cased name>\0<id>` at score 0, read in
 * lexicographic order (ZRANGE BYLEX) a page at a time. docs/redis-layout.md lists them.
 *
 * The index may hold more than the organizations, never less: an organization enters it before
 * its record is written (createOrganizationIfEmailFree), and leaves it after its deletion, or when
 * a listing finds its record gone (a lost e-mail race, a deletion cut off) and removes the entry.
 * A listing checks every entry against the record, so an entry alone never lists anything.
 * Organizations written before the index existed are added once, by the first listing: a SCAN of
 * the e-mail claims on every master, then a marker key says it is done.
 */
import { Cluster, type Redis } from 'ioredis';
import { shardTagOf } from '../shard-tag.js';
import {
  decodeCursor,
  encodeCursor,
  idOfPlace,
  nameKey,
  placeOf,
  type OrganizationPage,
  type OrganizationQuery,
} from '../organization-listing.js';
import type { Organization } from '../store.js';
import type { RedisKeys } from './keys.js';

/** Above every character a name or e-mail can hold: the end of a prefix's range. */
const HIGHEST = '\u{10FFFF}';

const globEscape = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/** The index's keys: by e-mail, by name (sorted sets) and the marker of the one backfill (a string). */
export function organizationIndexKeys(keys: RedisKeys) {
  const base = keys.shard(shardTagOf('organizations')).base;
  return { byEmail: `${base}ie`, byName: `${base}in`, built: `${base}ib` };
}

export function createOrganizationIndex(deps: {
  client: Redis | Cluster;
  keys: RedisKeys;
  readOrganization(orgId: string): Promise<Organization | undefined>;
  findOrganizationByEmail(email: string): Promise<Organization | undefined>;
}) {
  const { client, keys, readOrganization } = deps;
  const { byEmail, byName, built } = organizationIndexKeys(keys);
  let indexed = false;

  async function add(org: Pick<Organization, 'id' | 'name' | 'email'>): Promise<void> {
    // One tag: both sets are on one shard, so one MULTI.
    const reply = await client.multi().zadd(byEmail, 0, placeOf(org, false)).zadd(byName, 0, placeOf(org, true)).exec();
    for (const [error] of reply ?? []) if (error) throw error;
  }

  /** After a deletion: its entries go (a listing would remove them anyway, on finding the record gone). */
  async function remove(org: Pick<Organization, 'id' | 'name' | 'email'>): Promise<void> {
    const reply = await client.multi().zrem(byEmail, placeOf(org, false)).zrem(byName, placeOf(org, true)).exec();
    for (const [error] of reply ?? []) if (error) throw error;
  }

  /** Adds the organizations written before the index existed, once per environment. */
  async function backfill(): Promise<void> {
    if (indexed) return;
    if ((await client.exists(built)) === 1) {
      indexed = true;
      return;
    }
    const claimKeys = `${globEscape(keys.environmentBase)}:*}:e:*`;
    const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
    for (const node of nodes) {
      for await (const batch of node.scanStream({ match: claimKeys, count: 1000 })) {
        await Promise.all(
          (batch as string[]).map(async (claim) => {
            const orgId = await client.get(claim);
            const org = orgId === null ? undefined : await readOrganization(orgId);
            if (org !== undefined) await add(org);
          }),
        );
      }
    }
    await client.set(built, new Date().toISOString());
    indexed = true;
  }

  async function list(query: OrganizationQuery): Promise<OrganizationPage> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    if (query.email !== undefined) {
      // One organization at most: the e-mail's claim finds it.
      const org = await deps.findOrganizationByEmail(query.email);
      const listed = org !== undefined && (after === undefined || placeOf(org, false) > after);
      return { organizations: listed ? [org] : [], nextCursor: null };
    }
    await backfill();
    const byNameOrder = query.namePrefix !== undefined;
    const set = byNameOrder ? byName : byEmail;
    const prefix = query.namePrefix === undefined ? undefined : nameKey(query.namePrefix);
    let min = after !== undefined ? `(${after}` : prefix !== undefined ? `[${prefix}` : '-';
    const max = prefix !== undefined ? `(${prefix}${HIGHEST}` : '+';
    const found: { place: string; org: Organization }[] = [];
    // One more than the page: whether there is a next page is then known, not guessed.
    while (found.length <= query.limit) {
      const want = query.limit + 1 - found.length;
      const places = (await client.zrangebylex(set, min, max, 'LIMIT', 0, want)) as string[];
      const orgs = await Promise.all(places.map((place) => readOrganization(idOfPlace(place))));
      const stale: string[] = [];
      places.forEach((place, i) => {
        const org = orgs[i];
        if (org !== undefined && placeOf(org, byNameOrder) === place) found.push({ place, org });
        else stale.push(place);
      });
      // Entries whose organization is gone leave the index: ZREM of exactly those members.
      if (stale.length > 0) await client.zrem(set, ...stale);
      if (places.length < want) break;
      min = `(${places.at(-1)!}`;
    }
    const page = found.slice(0, query.limit);
    const more = found.length > query.limit;
    return { organizations: page.map((f) => f.org), nextCursor: more ? encodeCursor(page.at(-1)!.place) : null };
  }

  return { add, remove, list };
}
