/**
 * The Redis store: openRedisStorage, the one entry point (src/gateway.ts imports this module
 * lazily, so the embedded default never loads ioredis), opens the connection and the
 * invalidation bus, and the Store and CounterStore methods below run each step as one command or
 * one Lua script (scripts.ts), bounded in time, with its reply checked (replies.ts).
 */
import { Cluster } from 'ioredis';
import type { InvalidationBus } from '../invalidation.js';
import {
  byCreatedAtThenId,
  StoreUnavailable,
  type CounterStore,
  type Store,
} from '../store.js';
import { connect, quitRedisConnection, watchConnection, type RedisConnectionOptions } from './connection.js';
import { createRedisInvalidationBus } from './invalidation.js';
import { redisKeys } from './keys.js';
import {
  apiKeyReply,
  apiKeySummaries,
  attemptVerdict,
  counterStates,
  organizationReply,
  organizationRevocations,
  sessionReply,
  unexpected,
} from './replies.js';
import { defineScripts, scripts } from './scripts.js';
import { describe, withDeadline, type Logger } from './support.js';

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
};

export type RedisStorage = { store: Store & CounterStore; bus: InvalidationBus };

/**
 * Opens the Redis store and its invalidation bus. It does not wait for Redis: until the
 * connection is ready every method throws StoreUnavailable, and ping() says when it is.
 */
export async function openRedisStorage(options: OpenRedisStorageOptions): Promise<RedisStorage> {
  const keys = redisKeys(options.prefix, options.environment);
  const now = options.now ?? Date.now;
  const client = connect(options, Object.keys(scripts));
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
      (error) => new StoreUnavailable(`credential store unavailable (${operation})`, { cause: new Error(describe(error)) }),
    );
  }

  async function readOrganization(orgId: string) {
    return organizationReply(await client.hgetall(keys.organization(orgId)));
  }

  const store: Store & CounterStore = {
    createOrganizationIfEmailFree: (org) =>
      guard('createOrganizationIfEmailFree', async () => {
        const reply = await run.createOrganizationIfEmailFree(
          [keys.organizationIdByEmail(org.email), keys.organization(org.id)],
          [org.id, org.name, org.email, org.passwordHash, org.createdAt],
        );
        if (reply === 'email-taken') return 'email-taken';
        if (reply !== 'created') throw unexpected('createOrganizationIfEmailFree');
        return { id: org.id, name: org.name, email: org.email, passwordHash: org.passwordHash, createdAt: org.createdAt };
      }),

    findOrganizationByEmail: (email) =>
      guard('findOrganizationByEmail', async () => {
        const orgId: unknown = await client.get(keys.organizationIdByEmail(email));
        if (orgId === null) return undefined;
        if (typeof orgId !== 'string') throw unexpected('findOrganizationByEmail');
        return readOrganization(orgId);
      }),

    findOrganizationById: (orgId) => guard('findOrganizationById', () => readOrganization(orgId)),

    deleteOrganization: (orgId) =>
      announced((channel, head) => guard('deleteOrganization', async () =>
        organizationRevocations(await run.deleteOrganization(
          [keys.organization(orgId), keys.organizationApiKeys(orgId), keys.organizationSessions(orgId)],
          [orgId, keys.stems.organizationIdByEmail, keys.stems.apiKey, keys.stems.session, channel, head],
        )),
      )),

    createApiKey: (key) =>
      guard('createApiKey', async () => {
        const reply = await run.createApiKey(
          [keys.organization(key.orgId), keys.apiKey(key.hash), keys.organizationApiKeys(key.orgId)],
          [key.id, key.orgId, key.hash, key.displayPrefix, key.createdAt],
        );
        if (reply !== 'created' && reply !== 'no-organization') throw unexpected('createApiKey');
        return reply;
      }),

    findApiKeyByHash: (hash) =>
      guard('findApiKeyByHash', async () => apiKeyReply(await client.hgetall(keys.apiKey(hash)))),

    listApiKeys: (orgId) =>
      guard('listApiKeys', async () => {
        const reply = await run.listApiKeys([keys.organizationApiKeys(orgId)], [keys.stems.apiKey]);
        return apiKeySummaries(reply).sort(byCreatedAtThenId);
      }),

    deleteApiKeyIfOwned: (orgId, keyId) =>
      announced((channel, head) => guard('deleteApiKeyIfOwned', async () => {
        const reply = await run.deleteApiKeyIfOwned([keys.organizationApiKeys(orgId)], [keyId, keys.stems.apiKey, channel, head]);
        if (reply === null) return undefined;
        if (typeof reply !== 'string') throw unexpected('deleteApiKeyIfOwned');
        return { kind: 'api_key', cacheKey: reply };
      })),

    createSession: (session) =>
      guard('createSession', async () => {
        const t = now();
        const reply = await run.createSession(
          [keys.organization(session.orgId), keys.session(session.id), keys.organizationSessions(session.orgId)],
          [session.id, session.orgId, session.expiresAt, Math.ceil(session.expiresAt - t), t],
        );
        if (reply !== 'created' && reply !== 'no-organization') throw unexpected('createSession');
        return reply;
      }),

    findSession: (sessionId) =>
      guard('findSession', async () => {
        const session = sessionReply(await client.hgetall(keys.session(sessionId)));
        if (session === undefined) return undefined;
        // Redis expires the record by its own clock; the gateway's clock has the last word.
        return session.expiresAt <= now() ? undefined : session;
      }),

    deleteSession: (sessionId) =>
      announced((channel, head) => guard('deleteSession', async () => {
        const reply = await run.deleteSession(
          [keys.session(sessionId)],
          [keys.stems.organizationSessions, sessionId, now(), channel, head],
        );
        if (reply === 0) return undefined;
        if (reply !== 1) throw unexpected('deleteSession');
        return { kind: 'session', cacheKey: sessionId };
      })),

    countAttempt: ({ counters, windowMs, known }) =>
      guard('countAttempt', async () => {
        const keyNames = counters.map((counter) => keys.counter(counter.name));
        const args: (string | number)[] = [counters.length, Math.max(1, Math.ceil(windowMs))];
        for (const counter of counters) args.push(counter.limit, counter.exemptWhenKnown === true ? 1 : 0);
        if (known !== undefined) {
          keyNames.push(keys.knownSet(known.set));
          args.push(known.member, now() - known.knownTtlMs);
        }
        return attemptVerdict(await run.countAttempt(keyNames, args), counters);
      }),

    settleAttempt: ({ reset = [], giveBack = [], remember }) =>
      guard('settleAttempt', async () => {
        const keyNames = [...reset, ...giveBack].map(keys.counter);
        const args: (string | number)[] = [reset.length, giveBack.length];
        if (remember !== undefined) {
          keyNames.push(keys.knownSet(remember.set));
          args.push(remember.member, now(), Math.max(1, Math.ceil(remember.ttlMs)), Math.max(1, remember.max));
        }
        if (keyNames.length > 0) await run.settleAttempt(keyNames, args);
      }),

    readCounters: (names) =>
      guard('readCounters', async () => {
        if (names.length === 0) return [];
        return counterStates(await run.readCounters(names.map(keys.counter), []), names.length);
      }),

    ping: () =>
      guard('ping', async () => {
        // Cluster sends PING to any node; what the store needs is the master of our one slot.
        if (client instanceof Cluster) await client.exists(`${keys.base}ping`);
        else await client.ping();
      }),

    async close() {
      await bus.close();
      await quitRedisConnection(client);
    },
  };

  return { store, bus };
}
