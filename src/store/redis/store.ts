/**
 * The Redis store: openRedisStorage, the one entry point (src/gateway-parts.ts imports this module
 * lazily, so the embedded default never loads ioredis), opens the connection and the
 * invalidation bus, and assembles the GatewayStore from one part per concern (organizations.ts,
 * api-keys.ts, sessions.ts, counters.ts, audit.ts, tenant-limits.ts, rate-limits.ts, password-resets.ts), each given
 * the same context (context.ts). Each method runs its step as one command or one Lua script
 * (scripts/*.lua), bounded in time, with its reply checked (replies.ts).
 */
import { Cluster } from 'ioredis';
import type { InvalidationBus } from '../invalidation.js';
import { StoreUnavailable, type GatewayStore } from '../store.js';
import { WriteNotReplicated } from '../durability.js';
import { redisApiKeys } from './api-keys.js';
import { redisAudit } from './audit.js';
import { connect, quitRedisConnection, watchConnection, type RedisConnectionOptions } from './connection.js';
import { createStoreContext } from './context.js';
import { redisCounters } from './counters.js';
import { replicationWait } from './durability.js';
import { createRedisInvalidationBus } from './invalidation.js';
import { redisKeys } from './keys.js';
import { redisOrganizations } from './organizations.js';
import { redisPasswordResets } from './password-resets.js';
import { redisOrganizationProfiles } from './organization-profiles.js';
import { redisMfa } from './mfa.js';
import { redisPasskeys } from './passkeys.js';
import { redisMembers } from './members.js';
import { redisMemberPasswords } from './member-passwords.js';
import { redisInvitations } from './invitations.js';
import { redisRateLimits } from './rate-limits.js';
import { redisOrganizationPlans } from './organization-plans.js';
import { redisKeyQuotas } from './key-quotas.js';
import { defineScripts, SCRIPT_NAMES } from './scripts.js';
import { redisSessions } from './sessions.js';
import { redisTenantLimits } from './tenant-limits.js';
import { redisExternalIds } from './external-ids.js';
import { redisUsage } from './usage.js';
import { redisQuotas } from './quotas.js';
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

  const context = createStoreContext({ client, keys, now, run, logger: options.logger, announced, guard, durably });

  const store: GatewayStore = {
    ...redisOrganizations(context),
    ...redisApiKeys(context),
    ...redisSessions(context),
    ...redisCounters(context),
    /** Per organization, in audit.ts. */
    ...redisAudit({ client, keys, appendScript: run.appendAuditEvents, now, guard }),
    ...redisTenantLimits(context),
    ...redisRateLimits(context),
    ...redisOrganizationPlans(context),
    ...redisKeyQuotas(context),
    ...redisPasswordResets(context),
    ...redisOrganizationProfiles(context),
    ...redisMfa(context),
    ...redisPasskeys(context),
    ...redisExternalIds(context),
    ...redisUsage(context),
    ...redisQuotas(context),
    ...redisMembers(context),
    ...redisMemberPasswords(context),
    ...redisInvitations(context),

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
