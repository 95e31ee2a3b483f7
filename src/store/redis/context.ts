/**
 * What every part of the Redis store (redis/*.ts, one per concern) is given by redis/store.ts:
 * the client and its scripts, the key names, how a step is bounded, announced and made durable,
 * and where an organization's or a credential's data is. Written once here, so each part holds
 * only its own methods.
 */
import { shardTagIn, shardTagOf } from '../shard-tag.js';
import type { Organization } from '../store.js';
import type { Client } from './connection.js';
import type { ReplicationWait } from './durability.js';
import type { RedisKeys, ShardKeys } from './keys.js';
import { packId } from './packing.js';
import { ORGANIZATION_FIELDS, organizationReply } from './replies.js';
import type { Script, ScriptName } from './scripts.js';
import type { Logger } from './support.js';

export type RedisStoreBase = Readonly<{
  client: Client;
  keys: RedisKeys;
  now: () => number;
  /** Every script (scripts/*.lua), defined on the client. */
  run: Readonly<Record<ScriptName, Script>>;
  logger: Logger | undefined;
  /**
   * A revoking step: its script gets this replica's next message to PUBLISH, and the bus learns
   * whether the caller got the answer (so it knows who applies the revocation locally).
   */
  announced: <T>(work: (channel: string, head: string) => Promise<T>) => Promise<T>;
  /** Bounds a method by commandTimeoutMs and turns every failure into StoreUnavailable. */
  guard: <T>(operation: string, work: () => Promise<T>) => Promise<T>;
  /**
   * The writes that create or change a credential go through this (durability.ts): with
   * AUTHGATE_REDIS_WAIT_REPLICAS set, answered only once that many replicas have them.
   */
  durably: ReplicationWait['durably'];
}>;

export type RedisStoreContext = RedisStoreBase & Readonly<{
  /** Where an organization's data is: its shard's keys and its id as packed into names and values. */
  organizationPlace(orgId: string): { shard: ShardKeys; packed: string };
  /** The organization's record: a key on the node that takes every write of its credentials. */
  organizationRecord(orgId: string): string;
  readOrganization(orgId: string): Promise<Organization | undefined>;
  /**
   * A credential's handle (`<tag>.<rest>`, an API key's lookup hash or a session id) and the
   * shard it names; undefined for a handle without a tag (a credential of the first format).
   */
  credentialPlace(handle: string): { tag: string; shard: ShardKeys; rest: string } | undefined;
}>;

export function createStoreContext(base: RedisStoreBase): RedisStoreContext {
  const { client, keys } = base;

  function organizationPlace(orgId: string) {
    return { shard: keys.shard(shardTagOf(orgId)), packed: packId(orgId) };
  }

  function organizationRecord(orgId: string): string {
    const { shard, packed } = organizationPlace(orgId);
    return shard.organization(packed);
  }

  async function readOrganization(orgId: string) {
    const { shard, packed } = organizationPlace(orgId);
    // HMGET, not HGETALL: the record also holds the organization's key index.
    return organizationReply(orgId, await client.hmget(shard.organization(packed), ...ORGANIZATION_FIELDS));
  }

  function credentialPlace(handle: string) {
    const tag = shardTagIn(handle);
    return tag === undefined ? undefined : { tag, shard: keys.shard(tag), rest: handle.slice(tag.length + 1) };
  }

  return { ...base, organizationPlace, organizationRecord, readOrganization, credentialPlace };
}
