/**
 * The Redis store: openRedisStorage, the one entry point (src/gateway.ts imports this module
 * lazily, so the embedded default never loads ioredis), opens the connection and the
 * invalidation bus, and the GatewayStore methods below run each step as one command or
 * one Lua script (scripts.ts), bounded in time, with its reply checked (replies.ts).
 */
import { Cluster } from 'ioredis';
import type { InvalidationBus } from '../invalidation.js';
import {
  latestLoginFirst,
  newestFirst,
  storedScopes,
  StoreUnavailable,
  type Revoked,
  type GatewayStore,
  type LimitedCounter,
} from '../store.js';
import { connect, quitRedisConnection, watchConnection, type RedisConnectionOptions } from './connection.js';
import { createRedisInvalidationBus } from './invalidation.js';
import { redisKeys, type ShardKeys } from './keys.js';
import { DIGEST, packId, packMs } from './packing.js';
import { restAfterOrganizationTag, shardTagIn, shardTagOf } from '../shard-tag.js';
import {
  apiKeyIndexEntry,
  apiKeyReply,
  keyUseField,
  apiKeyValue,
  keyIndexField,
  ORGANIZATION_FIELDS,
  apiKeySummaries,
  apiKeySummaryReply,
  attemptVerdict,
  counterStates,
  organizationReply,
  organizationRevocations,
  rateGrant,
  rateLimitEntry,
  rateLimitTable,
  sessionInfoValue,
  sessionReply,
  sessionSummaryOf,
  unexpected,
} from './replies.js';
import { defineScripts, SCRIPT_NAMES } from './scripts.js';
import { changeApiKey, rollApiKey, type KeyChangeContext } from './key-changes.js';
import { replicationWait } from './durability.js';
import { WriteNotReplicated } from '../durability.js';
import { redisAudit } from './audit.js';
import { describe, withDeadline, type Logger } from './support.js';
import { createOrganizationIndex } from './organization-index.js';

export type { RedisConnectionOptions };

export type OpenRedisStorageOptions = RedisConnectionOptions & {
  /** AUTHGATE_REDIS_PREFIX, e.g. 'authgate:'; the environment goes in its own hash tag after it. */
  prefix: string;
  environment: string;
  now?: () => number;
  /** Called on each (re)connect whose maxmemory-policy may evict credentials (the store logs it). */
  onEvictionRisk?: (policy: string) => void;
  /** Called when a confirmed subscription to the revocation channel stops (the bus logs it). */
  onSubscriptionLost?: () => void;
  invalidationHeartbeatMs?: number;
  logger?: Logger;
  /** AUTHGATE_REDIS_WAIT_REPLICAS: replicas that must acknowledge a credential write (durability.ts). */
  waitReplicas?: number;
};

export type RedisStorage = { store: GatewayStore; bus: InvalidationBus };

/**
 * Opens the Redis store and its invalidation bus. It does not wait for Redis: until the
 * connection is ready every method throws StoreUnavailable, and ping() says when it is.
 */
export async function openRedisStorage(options: OpenRedisStorageOptions): Promise<RedisStorage> {
  const keys = redisKeys(options.prefix, options.environment);
  const now = options.now ?? Date.now;
  const client = connect(options, SCRIPT_NAMES);
  watchConnection(client, options);
  const run = defineScripts(client);

  const bus = createRedisInvalidationBus({
    connection: client,
    channel: keys.invalidationChannel,
    commandTimeoutMs: options.commandTimeoutMs,
    heartbeatMs: options.invalidationHeartbeatMs,
    onSubscriptionLost: options.onSubscriptionLost,
    logger: options.logger,
  });

  /**
   * A revoking step: its script gets this replica's next message to PUBLISH, and the bus learns
   * whether the caller got the answer (so it knows who applies the revocation locally).
   */
  async function announced<T>(work: (channel: string, head: string) => Promise<T>): Promise<T> {
    const message = bus.nextMessage();
    try {
      const result = await work(keys.invalidationChannel, message.head);
      message.settle(true);
      return result;
    } catch (error) {
      message.settle(false);
      throw error;
    }
  }

  /** Bounds a method by commandTimeoutMs and turns every failure into StoreUnavailable. */
  function guard<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return withDeadline(
      work,
      options.commandTimeoutMs,
      () => {
        throw new Error('timed out');
      },
      // Name and message only: an ioredis error carries the command's arguments (password hashes).
      (error) =>
        error instanceof WriteNotReplicated ? error : new StoreUnavailable(`credential store unavailable (${operation})`, { cause: new Error(describe(error)) }),
    );
  }

  /**
   * The writes that create or change a credential go through this (durability.ts): with
   * AUTHGATE_REDIS_WAIT_REPLICAS set, answered only once that many replicas have them. WAIT
   * gets half the command timeout, so a missing replica is told apart from a silent store.
   */
  const { durably } = replicationWait(client, options.waitReplicas ?? 0, options.commandTimeoutMs / 2);

  /** Where an organization's data is: its shard's keys and its id as packed into names and values. */
  function organizationPlace(orgId: string) {
    return { shard: keys.shard(shardTagOf(orgId)), packed: packId(orgId) };
  }

  /** The organization's record: a key on the node that takes every write of its credentials. */
  function organizationRecord(orgId: string): string {
    const { shard, packed } = organizationPlace(orgId);
    return shard.organization(packed);
  }

  async function readOrganization(orgId: string) {
    const { shard, packed } = organizationPlace(orgId);
    // HMGET, not HGETALL: the record also holds the organization's key index.
    return organizationReply(orgId, await client.hmget(shard.organization(packed), ...ORGANIZATION_FIELDS));
  }

  /** A key id as packed into its index field; undefined for an id no key can have (a space in it). */
  function packedKeyIdOrUndefined(keyId: string): string | undefined {
    try {
      return packId(keyId);
    } catch {
      return undefined;
    }
  }

  /**
   * One key's index entry and last use (HMGET), with where they are: undefined for an id no key
   * can have. `reply` is [entry or null, last use or null].
   */
  async function readKeyEntry(orgId: string, keyId: string) {
    const { shard, packed } = organizationPlace(orgId);
    const packedKeyId = packedKeyIdOrUndefined(keyId);
    if (packedKeyId === undefined) return undefined;
    const record = shard.organization(packed);
    const field = keyIndexField(packedKeyId);
    const reply = await client.hmget(record, field, keyUseField(packedKeyId));
    return { shard, record, field, packedOrgId: packed, packedKeyId, reply };
  }

  /** The e-mail → organization claim lives under the e-mail's own tag: any shard. */
  const emailClaim = (email: string) => keys.shard(shardTagOf(email)).emailClaim(email);
  const organizationIndex = createOrganizationIndex({
    client,
    keys,
    readOrganization,
    findOrganizationByEmail: async (email) => {
      const orgId: unknown = await client.get(emailClaim(email));
      return typeof orgId === 'string' ? readOrganization(orgId) : undefined;
    },
  });

  /**
   * A credential's handle (`<tag>.<rest>`, an API key's lookup hash or a session id) and the
   * shard it names; undefined for a handle without a tag (a credential of the first format).
   */
  function credentialPlace(handle: string) {
    const tag = shardTagIn(handle);
    return tag === undefined ? undefined : { tag, shard: keys.shard(tag), rest: handle.slice(tag.length + 1) };
  }

  /** deleteSession, with or without an owner the session must be of. */
  function endSession(sessionId: string, ownerOrgId: string | undefined) {
    return announced((channel, head) => guard('deleteSession', () => {
      const place = credentialPlace(sessionId);
      const shard = place?.shard ?? keys.shard(shardTagOf(sessionId));
      return durably([shard.sessions], () => endSessionOn(shard, place?.rest ?? '', channel, head));
    }));

    async function endSessionOn(shard: ShardKeys, rest: string, channel: string, head: string) {
      // An id without a tag names nothing, but the script still runs: it announces an empty
      // revocation, so this replica's message sequence has no hole.
      const reply = await run.deleteSession(
        [shard.sessions],
        [rest, now(), shard.organizationStem, channel, head, sessionId, ownerOrgId === undefined ? '' : packId(ownerOrgId)],
      );
      if (reply === 0) return undefined;
      if (reply !== 1) throw unexpected('deleteSession');
      return { kind: 'session', cacheKey: sessionId } satisfies Revoked;
    }
  }

  /** The one place counters and known sets are placed: by the text in braces in their name. */
  const counterShard = (name: string) => keys.shard(shardTagOf(/\{([^}]+)\}/.exec(name)?.[1] ?? name));

  const keyChanges: KeyChangeContext = { run, place: organizationPlace, announced };

  const store: GatewayStore = {
    /**
     * Two steps on two shards, in an order that keeps them safe: the organization is written
     * first (under its own tag), then the e-mail claimed (SET NX under the e-mail's tag), so a
     * claim always names an organization that was written. A crash between the two leaves an
     * organization nobody can reach (its id was never returned), never a taken e-mail. A claim
     * naming an organization that is gone was left by a deletion cut off before it released
     * the claim: it is released here (only while it still names the dead organization) and the
     * claim retried. Losing the claim deletes the organization just written.
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
        const claim = emailClaim(org.email);
        for (let attempt = 0; attempt < 3; attempt++) {
          if ((await client.set(claim, org.id, 'NX')) === 'OK') {
            return { id: org.id, name: org.name, email: org.email, passwordHash: org.passwordHash, createdAt: org.createdAt };
          }
          const holder: unknown = await client.get(claim);
          if (typeof holder === 'string' && (await readOrganization(holder)) === undefined) {
            await run.releaseEmail([claim], [holder]);
            continue;
          }
          if (holder !== null) break;
        }
        await client.del(record);
        return 'email-taken';
      })),

    findOrganizationByEmail: (email) =>
      guard('findOrganizationByEmail', async () => {
        const orgId: unknown = await client.get(emailClaim(email));
        if (orgId === null) return undefined;
        if (typeof orgId !== 'string') throw unexpected('findOrganizationByEmail');
        // A claim whose organization is gone (a deletion cut off halfway) finds nothing.
        return readOrganization(orgId);
      }),

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
          [tag, channel, head],
        );
        const deleted = organizationRevocations(reply);
        if (deleted === undefined) return undefined;
        if (listed !== undefined) {
          // Committed already: an entry left behind is removed by the next listing that meets it.
          await organizationIndex.remove(listed).catch((error: unknown) => {
            options.logger?.warn({ event: 'redis_organization_index_failed', error: describe(error) }, 'the deleted organization stays in the listing index until a listing meets it');
          });
        }
        if (deleted.email !== '') {
          // The deletion is committed and announced: a claim left behind is repaired by the next
          // sign-up with the e-mail, so a failure here must not turn the answer into an error.
          await run.releaseEmail([emailClaim(deleted.email)], [orgId]).catch((error: unknown) => {
            options.logger?.warn({ event: 'redis_email_release_failed', error: describe(error) }, 'the deleted organization\'s e-mail stays claimed until its next sign-up');
          });
        }
        return deleted.revoked;
      }))),

    createApiKey: (key, maxKeys) =>
      guard('createApiKey', () => durably([organizationRecord(key.orgId)], async () => {
        const digest = restAfterOrganizationTag(key.hash, key.orgId, 'the API key');
        if (!DIGEST.test(digest)) throw new Error('an API key lookup hash is <tag>.<22 base64url>');
        const { shard, packed } = organizationPlace(key.orgId);
        const packedKeyId = packId(key.id);
        const stored = { ...key, scopes: storedScopes(key.scopes) };
        const reply = await run.createApiKey(
          [shard.organization(packed), shard.apiKeys],
          [digest, apiKeyValue(packed, packedKeyId, stored), keyIndexField(packedKeyId), apiKeyIndexEntry(digest, stored), maxKeys === undefined ? '' : Math.max(0, Math.floor(maxKeys))],
        );
        if (reply !== 'created' && reply !== 'no-organization' && reply !== 'limit-reached') throw unexpected('createApiKey');
        return reply;
      })),

    /** The hot path: one HGET on the shard the key's own tag names. */
    findApiKeyByHash: (hash) =>
      guard('findApiKeyByHash', async () => {
        const place = credentialPlace(hash);
        if (place === undefined || !DIGEST.test(place.rest)) return undefined;
        return apiKeyReply(hash, await client.hget(place.shard.apiKeys, place.rest));
      }),

    listApiKeys: (orgId) =>
      guard('listApiKeys', async () => {
        const { shard, packed } = organizationPlace(orgId);
        return apiKeySummaries(await client.hgetall(shard.organization(packed))).sort(newestFirst);
      }),

    /** One HMGET of the key's index field and its last use in its organization's record. */
    findApiKeySummary: (orgId, keyId) =>
      guard('findApiKeySummary', async () => {
        const found = await readKeyEntry(orgId, keyId);
        return found === undefined ? undefined : apiKeySummaryReply(found.packedKeyId, found.reply, 'findApiKeySummary');
      }),

    /** One script reads the key, checks the change against it and writes it (key-changes.ts). */
    changeApiKey: (orgId, keyId, change) =>
      guard('changeApiKey', () => durably([organizationRecord(orgId)], () => changeApiKey(keyChanges, orgId, keyId, change))),

    /** One script, as changeApiKey: the successor and the rolled key's new end (key-changes.ts). */
    rollApiKey: (orgId, keyId, roll) =>
      guard('rollApiKey', () => durably([organizationRecord(orgId)], () => rollApiKey(keyChanges, orgId, keyId, roll))),

    pruneExpiredApiKeys: (orgId, before) =>
      guard('pruneExpiredApiKeys', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.pruneExpiredApiKeys([shard.organization(packed), shard.apiKeys], [Math.floor(before)]);
        if (typeof reply !== 'number') throw unexpected('pruneExpiredApiKeys');
        return reply;
      }),

    /**
     * One script per organization, all sent at once without waiting for each other (a pipeline
     * in effect, which also works across Cluster shards, where an ioredis pipeline would not).
     */
    recordApiKeyUse: (uses) =>
      guard('recordApiKeyUse', async () => {
        const byOrg = new Map<string, (string | number)[]>();
        for (const { orgId, keyId, at } of uses) {
          const packedKeyId = packedKeyIdOrUndefined(keyId);
          if (packedKeyId === undefined) continue;
          let args = byOrg.get(orgId);
          if (args === undefined) byOrg.set(orgId, (args = []));
          args.push(packedKeyId, packMs(at));
        }
        await Promise.all([...byOrg].map(([orgId, args]) => {
          const { shard, packed } = organizationPlace(orgId);
          return run.recordApiKeyUse([shard.organization(packed)], args);
        }));
      }),

    deleteApiKeyIfOwned: (orgId, keyId) =>
      announced((channel, head) => guard('deleteApiKeyIfOwned', () => durably([organizationRecord(orgId)], async () => {
        const { shard, packed } = organizationPlace(orgId);
        let field: string;
        try {
          field = keyIndexField(packId(keyId));
        } catch {
          field = ''; // an id no key can have (a space in it): the script still announces nothing
        }
        const reply = await run.deleteApiKeyIfOwned(
          [shard.organization(packed), shard.apiKeys],
          [field, shardTagOf(orgId), channel, head],
        );
        if (reply === null) return undefined;
        if (typeof reply !== 'string') throw unexpected('deleteApiKeyIfOwned');
        return { kind: 'api_key', cacheKey: reply };
      }))),

    createSession: (session, maxSessions) =>
      guard('createSession', () => durably([organizationRecord(session.orgId)], async () => {
        const field = restAfterOrganizationTag(session.id, session.orgId, 'the session id');
        if (/\s/.test(field) || field === '') throw new Error('a session id is <tag>.<random>');
        const { shard, packed } = organizationPlace(session.orgId);
        const t = now();
        const reply = await run.createSession(
          [shard.organization(packed), shard.sessions, shard.organizationSessions(packed), shard.organizationSessionInfo(packed)],
          [field, `${packed} ${packMs(session.expiresAt)}`, session.expiresAt, Math.ceil(session.expiresAt - t), t, shard.organizationStem, sessionInfoValue(session), maxSessions === undefined ? '' : Math.max(0, Math.floor(maxSessions))],
        );
        if (reply !== 'created' && reply !== 'no-organization' && reply !== 'limit-reached') throw unexpected('createSession');
        return reply;
      })),

    /** The hot path for login tokens: one HGET on the shard the session id's tag names. */
    findSession: (sessionId) =>
      guard('findSession', async () => {
        const place = credentialPlace(sessionId);
        if (place === undefined) return undefined;
        const session = sessionReply(sessionId, await client.hget(place.shard.sessions, place.rest));
        if (session === undefined) return undefined;
        // Redis cannot expire a hash field: the record's own expiresAt, by the gateway's clock, decides.
        return session.expiresAt <= now() ? undefined : session;
      }),

    deleteSession: (sessionId) => endSession(sessionId, undefined),

    deleteSessionIfOwned: (orgId, sessionId) => endSession(sessionId, orgId),

    /** The org's session index (live ones by score) and their info: two reads, one shard. */
    listSessions: (orgId) =>
      guard('listSessions', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const live: unknown = await client.zrangebyscore(shard.organizationSessions(packed), `(${now()}`, '+inf', 'WITHSCORES');
        if (!Array.isArray(live)) throw unexpected('listSessions');
        if (live.length === 0) return [];
        const rests: string[] = [];
        const ends: number[] = [];
        for (let i = 0; i < live.length; i += 2) {
          if (typeof live[i] !== 'string') throw unexpected('listSessions');
          rests.push(live[i] as string);
          ends.push(Number(live[i + 1]));
        }
        const info: unknown = await client.hmget(shard.organizationSessionInfo(packed), ...rests);
        if (!Array.isArray(info) || info.length !== rests.length) throw unexpected('listSessions');
        const tag = shardTagOf(orgId);
        return rests.map((rest, i) => sessionSummaryOf(`${tag}.${rest}`, ends[i]!, info[i] ?? null)).sort(latestLoginFirst);
      }),

    deleteAllSessions: (orgId) =>
      announced((channel, head) => guard('deleteAllSessions', () => durably([organizationRecord(orgId)], async () => {
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.deleteAllSessions(
          [shard.organizationSessions(packed), shard.organizationSessionInfo(packed), shard.sessions],
          [shardTagOf(orgId), channel, head],
        );
        if (!Array.isArray(reply) || reply.some((id) => typeof id !== 'string')) throw unexpected('deleteAllSessions');
        return (reply as string[]).map((cacheKey): Revoked => ({ kind: 'session', cacheKey }));
      }))),

    /**
     * The counters of one place (text in braces) are checked and counted in one script. The
     * place holding the known set goes first; a later place that refuses has the earlier
     * places' counts given back, so an attempt is counted everywhere or (once the give-back
     * landed) nowhere. Until then a concurrent attempt may be refused by a count about to go
     * back: the limit errs on the strict side, never the loose one.
     */
    countAttempt: ({ counters, windowMs, known }) =>
      guard('countAttempt', async () => {
        const window = Math.max(1, Math.ceil(windowMs));
        // The known set's place first (a Map keeps the order places are first used in).
        const places = new Map<string, Place<LimitedCounter[]>>();
        const knownShard = known === undefined ? undefined : counterShard(known.set);
        if (knownShard !== undefined) placeIn(places, knownShard, () => []);
        for (const counter of counters) placeIn(places, counterShard(counter.name), () => []).push(counter);
        let isKnown = false;
        let exhausted = false;
        const counted: string[] = [];
        for (const [base, { shard, value: items }] of places) {
          const keyNames = items.map((counter) => shard.counter(counter.name));
          const args: (string | number)[] = [items.length, window];
          for (const counter of items) args.push(counter.limit, counter.exemptWhenKnown === true ? 1 : 0);
          if (known !== undefined && base === knownShard?.base) {
            keyNames.push(shard.knownSet(known.set));
            args.push(known.member, now() - known.knownTtlMs);
          } else {
            args.push(isKnown ? 1 : 0);
          }
          const verdict = attemptVerdict(await run.countAttempt(keyNames, args), items);
          if (!verdict.allowed) {
            if (counted.length > 0) await store.settleAttempt({ giveBack: counted }).catch(() => undefined);
            return verdict;
          }
          isKnown ||= verdict.known;
          exhausted ||= verdict.exhausted;
          counted.push(...verdict.counted);
        }
        return { allowed: true, known: isKnown, counted, exhausted };
      }),

    /** One script per place; the places are independent, so they run side by side. */
    settleAttempt: ({ reset = [], giveBack = [], remember }) =>
      guard('settleAttempt', async () => {
        type Part = { reset: string[]; giveBack: string[]; remember?: typeof remember };
        const parts = new Map<string, Place<Part>>();
        const partOf = (name: string) => placeIn(parts, counterShard(name), (): Part => ({ reset: [], giveBack: [] }));
        for (const name of reset) partOf(name).reset.push(name);
        for (const name of giveBack) partOf(name).giveBack.push(name);
        if (remember !== undefined) partOf(remember.set).remember = remember;
        await Promise.all([...parts.values()].map(async ({ shard, value: part }) => {
          const keyNames = [...part.reset, ...part.giveBack].map(shard.counter);
          const args: (string | number)[] = [part.reset.length, part.giveBack.length];
          if (part.remember !== undefined) {
            keyNames.push(shard.knownSet(part.remember.set));
            args.push(part.remember.member, now(), Math.max(1, Math.ceil(part.remember.ttlMs)), Math.max(1, part.remember.max));
          }
          await run.settleAttempt(keyNames, args);
        }));
      }),

    readCounters: (names) =>
      guard('readCounters', async () => {
        const states = await Promise.all(names.map(async (name) => {
          const [state] = counterStates(await run.readCounters([counterShard(name).counter(name)], []), 1);
          return state!;
        }));
        return states;
      }),

    /** An organization's own key limit: a field of its record (`maxKeys`), gone with it. */
    readKeyLimit: (orgId) =>
      guard('readKeyLimit', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const value = await client.hget(shard.organization(packed), 'maxKeys');
        return value === null ? undefined : Number(value);
      }),

    setKeyLimit: (orgId, limit) =>
      guard('setKeyLimit', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.setKeyLimit([shard.organization(packed)], [limit === null ? '' : Math.max(0, Math.floor(limit))]);
        if (reply !== 0 && reply !== 1) throw unexpected('setKeyLimit');
        return reply === 1;
      }),

    /** Per organization, in audit.ts. */
    ...redisAudit({ client, keys, appendScript: run.appendAuditEvents, now, guard }),

    /** One HGETALL: the table is overrides only, one small hash per environment. */
    readRateLimits: () => guard('readRateLimits', async () => rateLimitTable(await client.hgetall(keys.rateLimits))),

    /** One script that announces the change and writes it (setRateLimit in scripts.ts). */
    setRateLimit: async (target, limit) => {
      // Checked before a message is handed out: a bad argument is a bug, not an outage.
      const [field, value] = rateLimitEntry(target, limit);
      return announced((channel, head) => guard('setRateLimit', async () => {
        const reply = await run.setRateLimit([keys.rateLimits], [field, value, channel, head, target.orgId]);
        if (reply !== 1) throw unexpected('setRateLimit');
      }));
    },

    dropRateLimits: async (orgId) => {
      rateLimitEntry({ kind: 'organization', orgId }, null);
      return announced((channel, head) => guard('dropRateLimits', async () => {
        const reply = await run.dropRateLimits([keys.rateLimits], [orgId, channel, head]);
        if (typeof reply !== 'number') throw unexpected('dropRateLimits');
      }));
    },

    /** One script on the credential's window, on its organization's shard, by Redis's clock. */
    leaseRateBudget: ({ credentialId, orgId, limit, windowMs, want, replica }) =>
      guard('leaseRateBudget', async () => {
        const wanted = Math.max(0, Math.floor(want));
        const reply = await run.leaseRateBudget(
          [keys.shard(shardTagOf(orgId)).rateWindow(credentialId)],
          [Math.max(0, Math.floor(limit)), Math.max(1, Math.ceil(windowMs)), wanted, replica],
        );
        return rateGrant(reply, wanted);
      }),

    listOrganizations: (query) => guard('listOrganizations', () => organizationIndex.list(query)),

    ping: () =>
      guard('ping', async () => {
        // On Cluster, a key's read: it fails (CLUSTERDOWN) while the cluster does not serve every
        // slot, which is also when a master without a replica to replace it is down. PING would
        // only say that some node answers.
        if (client instanceof Cluster) await client.exists(`${keys.environmentBase}:ping}`);
        else await client.ping();
      }),

    async close() {
      await bus.close();
      await quitRedisConnection(client);
    },
  };

  return { store, bus };
}

/** What is kept for one shard (a place) while a step is split by shard. */
type Place<T> = { shard: ShardKeys; value: T };

/** The value of a shard's place, made on first use; a Map keeps places in that order. */
function placeIn<T>(places: Map<string, Place<T>>, shard: ShardKeys, make: () => T): T {
  let place = places.get(shard.base);
  if (place === undefined) places.set(shard.base, (place = { shard, value: make() }));
  return place.value;
}
