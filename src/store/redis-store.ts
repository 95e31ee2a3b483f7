import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { InvalidationBus } from './invalidation.js';
import { byCreatedAtThenId } from './memory-store.js';
import { createRedisInvalidationBus, quitRedisConnection } from './redis-invalidation.js';
import { redisKeys } from './redis-keys.js';
import {
  StoreUnavailable,
  type ApiKeyRecord,
  type ApiKeySummary,
  type AttemptVerdict,
  type CounterState,
  type CounterStore,
  type LimitedCounter,
  type Organization,
  type Revoked,
  type Session,
  type Store,
} from './store.js';

type Logger = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
type Address = { host: string; port: number };

/** Exactly one of url, sentinels (with sentinelName) or clusterNodes says where Redis is. */
export type RedisConnectionOptions = {
  /** Standalone: redis://[user:password@]host:port[/db], or rediss:// for TLS. */
  url?: string;
  sentinels?: readonly Address[];
  sentinelName?: string;
  /** User and password of the Sentinels themselves, when they ask for them. */
  sentinelUsername?: string;
  sentinelPassword?: string;
  clusterNodes?: readonly Address[];
  username?: string;
  password?: string;
  /**
   * TLS on every connection: to the Sentinels and the master they name, to every Cluster node.
   * A standalone rediss:// url turns it on by itself. Certificates are always verified.
   */
  tls?: Readonly<{
    /** PEM CA bundle trusted instead of Node's built-in CAs. */
    ca?: string;
    /** Name checked in certificates (and sent as SNI) instead of the address connected to. */
    serverName?: string;
  }>;
  /** How long a store method may take before it throws StoreUnavailable. */
  commandTimeoutMs: number;
};

export type OpenRedisStorageOptions = RedisConnectionOptions & {
  /** AUTHGATE_REDIS_PREFIX, e.g. 'authgate:'; the environment goes in its own hash tag after it. */
  prefix: string;
  environment: string;
  now?: () => number;
  /** Called on each (re)connect whose maxmemory-policy may evict credentials. */
  onEvictionRisk?: (policy: string) => void;
  onSubscriptionLost?: () => void;
  invalidationHeartbeatMs?: number;
  logger?: Logger;
};

export type RedisStorage = { store: Store & CounterStore; bus: InvalidationBus };

type Client = Redis | Cluster;
type Script = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;
type ScriptSource = Readonly<{ keys: number | 'any'; lua: string }>;

/**
 * One Lua script per multi-key step, so each Store method is atomic. Every key a script touches
 * shares the deployment's hash tag (redis-keys.ts), which is what lets a script name keys it finds
 * in an index (ARGV stems) and still run on Redis Cluster.
 */
/**
 * The revoking scripts announce what they revoke on the invalidation channel themselves, in the
 * same atomic step as the write: a revocation is then announced exactly when it is committed
 * (a separate PUBLISH after the script could fail and leave a committed revocation unannounced),
 * and on Cluster a PUBLISH from a script still reaches every node. The last two ARGV are the
 * channel and the message head from the bus (origin and seq, redis-invalidation.ts); the script
 * appends what it revoked. Each script PUBLISHes exactly once, also when it revokes nothing, so
 * the sequence has no holes, and it does so after its reads and BEFORE its writes: Redis does
 * not roll a script back, and a refused PUBLISH (an ACL user without the channel) must stop the
 * script while it has changed nothing. Nobody sees the gap: the script runs alone.
 */
const announce = `
local function announce(channel, head, revoked)
  local items = {}
  for i, item in ipairs(revoked) do items[i] = cjson.encode(item) end
  redis.call('PUBLISH', channel, head .. '[' .. table.concat(items, ',') .. ']}')
end`;

const scripts = {
  // KEYS: email, org. ARGV: id, name, email, passwordHash, createdAt.
  createOrganizationIfEmailFree: {
    keys: 2,
    lua: `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 'email-taken' end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'name', ARGV[2], 'email', ARGV[3],
  'passwordHash', ARGV[4], 'createdAt', ARGV[5])
return 'created'`,
  },
  // KEYS: org, api key, org's key index. ARGV: id, orgId, hash, displayPrefix, createdAt.
  createApiKey: {
    keys: 3,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'orgId', ARGV[2], 'hash', ARGV[3],
  'displayPrefix', ARGV[4], 'createdAt', ARGV[5])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return 'created'`,
  },
  // KEYS: org's key index. ARGV: apiKey stem. Reply: {id, displayPrefix, createdAt} per key.
  listApiKeys: {
    keys: 1,
    lua: `
local out = {}
for _, hash in ipairs(redis.call('HVALS', KEYS[1])) do
  local record = redis.call('HMGET', ARGV[1] .. hash, 'id', 'displayPrefix', 'createdAt')
  if record[1] then out[#out + 1] = record end
end
return out`,
  },
  // KEYS: org's key index. ARGV: keyId, apiKey stem, channel, message head.
  // Reply: the deleted key's hash, or nil.
  deleteApiKeyIfOwned: {
    keys: 1,
    lua: `${announce}
local hash = redis.call('HGET', KEYS[1], ARGV[1])
if not hash then
  announce(ARGV[3], ARGV[4], {})
  return false
end
announce(ARGV[3], ARGV[4], {{kind = 'api_key', cacheKey = hash}})
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', ARGV[2] .. hash)
return hash`,
  },
  // KEYS: org, session, org's sessions. ARGV: id, orgId, expiresAt, ttlMs, now.
  // Prunes the org's expired sessions from its index here, since Redis expires only the records.
  createSession: {
    keys: 3,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
if tonumber(ARGV[4]) <= 0 then return 'created' end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'orgId', ARGV[2], 'expiresAt', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 'created'`,
  },
  // KEYS: n counters, then the known set (optional). ARGV: n, windowMs, then per counter
  // its limit and 1 if exempt when known, then (with the set) member and known-after (epoch ms).
  // Reply: {1, known, exhausted, indexes counted} when allowed, {0, ms to wait} when refused.
  // Checks every counter first and counts only if all are below their limits, so a window never
  // admits more than its limit. A counter found without a TTL (never expected) gets one, so
  // nothing stays locked forever.
  countAttempt: {
    keys: 'any',
    lua: `
local n = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local known = false
if #KEYS > n then
  local seen = redis.call('ZSCORE', KEYS[n + 1], ARGV[3 + 2 * n])
  known = seen ~= false and tonumber(seen) > tonumber(ARGV[4 + 2 * n])
end
local applying = {}
local retry = 0
for i = 1, n do
  if not (known and ARGV[2 + 2 * i] == '1') then
    applying[#applying + 1] = i
    local count = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
    if count >= tonumber(ARGV[1 + 2 * i]) then
      local ttl = redis.call('PTTL', KEYS[i])
      if ttl < 0 then
        redis.call('PEXPIRE', KEYS[i], window)
        ttl = window
      end
      if ttl > retry then retry = ttl end
    end
  end
end
if retry > 0 then return {0, retry} end
local exhausted = 0
local counted = {}
for _, i in ipairs(applying) do
  local count = redis.call('INCR', KEYS[i])
  if count == 1 or redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], window) end
  if count >= tonumber(ARGV[1 + 2 * i]) then exhausted = 1 end
  counted[#counted + 1] = i
end
return {1, known and 1 or 0, exhausted, counted}`,
  },
  // KEYS: r counters to reset, g counters to give one back, then the known set (optional).
  // ARGV: r, g, then (with the set) member, now, ttlMs, max. A give-back never goes below zero
  // nor makes a counter that is not there (DECR keeps the TTL).
  settleAttempt: {
    keys: 'any',
    lua: `
local r = tonumber(ARGV[1])
local g = tonumber(ARGV[2])
for i = 1, r do redis.call('DEL', KEYS[i]) end
for i = r + 1, r + g do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if count > 0 then redis.call('DECR', KEYS[i]) end
end
if #KEYS > r + g then
  local set = KEYS[r + g + 1]
  local now = tonumber(ARGV[4])
  local ttl = tonumber(ARGV[5])
  redis.call('ZADD', set, now, ARGV[3])
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now - ttl)
  redis.call('ZREMRANGEBYRANK', set, 0, -(tonumber(ARGV[6]) + 1))
  redis.call('PEXPIRE', set, ttl)
end
return 1`,
  },
  // KEYS: counters. Reply: {count, ms left} per counter; {0, 0} for one that is not there.
  readCounters: {
    keys: 'any',
    lua: `
local out = {}
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if count == nil or ttl < 0 then out[i] = {0, 0} else out[i] = {count, ttl} end
end
return out`,
  },
  // KEYS: session. ARGV: org sessions stem, sessionId, now, channel, message head.
  // Reply: 1 if a live session went.
  deleteSession: {
    keys: 1,
    lua: `${announce}
local record = redis.call('HMGET', KEYS[1], 'orgId', 'expiresAt')
if not record[1] then
  announce(ARGV[4], ARGV[5], {})
  return 0
end
local expiresAt = tonumber(record[2])
local live = expiresAt ~= nil and expiresAt > tonumber(ARGV[3])
announce(ARGV[4], ARGV[5], live and {{kind = 'session', cacheKey = ARGV[2]}} or {})
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[1] .. record[1], ARGV[2])
if live then return 1 end
return 0`,
  },
  // KEYS: org, org's key index, org's sessions. ARGV: orgId, email stem, apiKey stem, session stem,
  // channel, message head. Reply: nil when there was no org, else {key hashes, session ids}.
  deleteOrganization: {
    keys: 3,
    lua: `${announce}
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[5], ARGV[6], {})
  return false
end
local email = redis.call('HGET', KEYS[1], 'email')
local hashes = redis.call('HVALS', KEYS[2])
local sessionIds = redis.call('ZRANGE', KEYS[3], 0, -1)
local revoked = {}
for _, hash in ipairs(hashes) do revoked[#revoked + 1] = {kind = 'api_key', cacheKey = hash} end
for _, id in ipairs(sessionIds) do revoked[#revoked + 1] = {kind = 'session', cacheKey = id} end
announce(ARGV[5], ARGV[6], revoked)
if email and redis.call('GET', ARGV[2] .. email) == ARGV[1] then redis.call('DEL', ARGV[2] .. email) end
for _, hash in ipairs(hashes) do redis.call('DEL', ARGV[3] .. hash) end
for _, id in ipairs(sessionIds) do redis.call('DEL', ARGV[4] .. id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {hashes, sessionIds}`,
  },
} as const satisfies Record<string, ScriptSource>;

/**
 * Opens the Redis store and its invalidation bus. It does not wait for Redis: until the
 * connection is ready every method throws StoreUnavailable, and ping() says when it is.
 */
export async function openRedisStorage(options: OpenRedisStorageOptions): Promise<RedisStorage> {
  const keys = redisKeys(options.prefix, options.environment);
  const now = options.now ?? Date.now;
  const logger = options.logger;
  const client = connect(options);
  watchConnection(client, options);

  const run = Object.fromEntries(
    Object.entries(scripts).map(([name, source]) => [name, defineScript(client, name, source)]),
  ) as Record<keyof typeof scripts, Script>;

  const bus = createRedisInvalidationBus({
    connection: client,
    channel: keys.invalidationChannel,
    commandTimeoutMs: options.commandTimeoutMs,
    heartbeatMs: options.invalidationHeartbeatMs,
    onSubscriptionLost: options.onSubscriptionLost,
    logger,
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
    // One promise and one timer: a cold credential lookup runs this on every request.
    return new Promise<T>((resolve, reject) => {
      const fail = (error: unknown) => {
        clearTimeout(timer);
        // Name and message only: an ioredis error carries the command's arguments (password hashes).
        reject(new StoreUnavailable(`credential store unavailable (${operation})`, { cause: sanitize(error) }));
      };
      const timer = setTimeout(fail, options.commandTimeoutMs, new Error('timed out'));
      let pending: Promise<T>;
      try {
        pending = work();
      } catch (error) {
        fail(error); // a method that throws before its first await is a failure like any other
        return;
      }
      pending.then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, fail);
    });
  }

  async function readOrganization(orgId: string): Promise<Organization | undefined> {
    const record = hashReply(await client.hgetall(keys.organization(orgId)), 'organization');
    if (record === undefined) return undefined;
    return {
      id: field(record, 'id', 'organization'),
      name: field(record, 'name', 'organization'),
      email: field(record, 'email', 'organization'),
      passwordHash: field(record, 'passwordHash', 'organization'),
      createdAt: field(record, 'createdAt', 'organization'),
    };
  }

  function counterStates(reply: unknown, count: number): CounterState[] {
    if (!Array.isArray(reply) || reply.length !== count) throw unexpected('counters');
    return (reply as unknown[]).map((entry): CounterState => {
      if (!Array.isArray(entry)) throw unexpected('counters');
      const [value, resetInMs] = entry as unknown[];
      if (typeof value !== 'number' || typeof resetInMs !== 'number') throw unexpected('counters');
      return { count: value, resetInMs };
    });
  }

  function attemptVerdict(reply: unknown, counters: readonly LimitedCounter[]): AttemptVerdict {
    if (!Array.isArray(reply)) throw unexpected('countAttempt');
    const [allowed, second, exhausted, counted] = reply as unknown[];
    if (allowed === 0 && typeof second === 'number') return { allowed: false, retryInMs: second };
    if (allowed !== 1 || typeof second !== 'number' || typeof exhausted !== 'number' || !Array.isArray(counted)) {
      throw unexpected('countAttempt');
    }
    const names = (counted as unknown[]).map((index) => {
      const counter = typeof index === 'number' ? counters[index - 1] : undefined;
      if (counter === undefined) throw unexpected('countAttempt');
      return counter.name;
    });
    return { allowed: true, known: second === 1, counted: names, exhausted: exhausted === 1 };
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
      announced((channel, head) => guard('deleteOrganization', async () => {
        const reply = await run.deleteOrganization(
          [keys.organization(orgId), keys.organizationApiKeys(orgId), keys.organizationSessions(orgId)],
          [orgId, keys.stems.organizationIdByEmail, keys.stems.apiKey, keys.stems.session, channel, head],
        );
        if (reply === null) return undefined;
        if (!Array.isArray(reply) || reply.length !== 2) throw unexpected('deleteOrganization');
        const [hashes, sessionIds] = reply as unknown[];
        return [
          ...strings(hashes, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'api_key', cacheKey })),
          ...strings(sessionIds, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'session', cacheKey })),
        ];
      })),

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
      guard('findApiKeyByHash', async () => {
        const record = hashReply(await client.hgetall(keys.apiKey(hash)), 'api key');
        if (record === undefined) return undefined;
        const key: ApiKeyRecord = {
          id: field(record, 'id', 'api key'),
          orgId: field(record, 'orgId', 'api key'),
          hash: field(record, 'hash', 'api key'),
          displayPrefix: field(record, 'displayPrefix', 'api key'),
          createdAt: field(record, 'createdAt', 'api key'),
        };
        return key;
      }),

    listApiKeys: (orgId) =>
      guard('listApiKeys', async () => {
        const reply = await run.listApiKeys([keys.organizationApiKeys(orgId)], [keys.stems.apiKey]);
        if (!Array.isArray(reply)) throw unexpected('listApiKeys');
        const summaries: ApiKeySummary[] = (reply as unknown[]).map((entry) => {
          const [id, displayPrefix, createdAt] = strings(entry, 'listApiKeys');
          if (id === undefined || displayPrefix === undefined || createdAt === undefined) {
            throw unexpected('listApiKeys');
          }
          return { id, displayPrefix, createdAt };
        });
        return summaries.sort(byCreatedAtThenId);
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
        const record = hashReply(await client.hgetall(keys.session(sessionId)), 'session');
        if (record === undefined) return undefined;
        const session: Session = {
          id: field(record, 'id', 'session'),
          orgId: field(record, 'orgId', 'session'),
          expiresAt: finiteNumber(field(record, 'expiresAt', 'session'), 'session'),
        };
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

/**
 * Commands issued in the same event-loop turn leave in one write: under load many requests
 * miss the cache in one turn, and their reads then share a round trip and a syscall. The Lua
 * scripts stay out of it: they are writes, off the request path, and ioredis sends a pipelined
 * script differently (SCRIPT EXISTS/LOAD first, remembered per connection) from a plain call's
 * EVALSHA with its EVAL fallback, which is what the failover tests exercise.
 */
const autoPipelining = {
  enableAutoPipelining: true,
  autoPipeliningIgnoredCommands: Object.keys(scripts),
} satisfies RedisOptions & ClusterOptions;

function connect(options: RedisConnectionOptions): Client {
  const ways = [options.url, options.sentinels, options.clusterNodes].filter((way) => way !== undefined);
  if (ways.length !== 1) {
    throw new Error('Redis needs exactly one of: url, sentinels (with sentinelName), clusterNodes');
  }
  const auth: RedisOptions = {
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
  };
  const connection: RedisOptions = {
    // Fail at once while disconnected instead of queueing: the caller answers 503 right away.
    enableOfflineQueue: false,
    // A command whose caller already got StoreUnavailable must not run later, after a reconnect.
    autoResendUnfulfilledCommands: false,
    commandTimeout: options.commandTimeoutMs,
    maxRetriesPerRequest: 1,
    // After a failover the old master may still take our connection, read-only: reconnect.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    ...autoPipelining,
  };
  // Reconnect forever, never faster than every 100 ms nor slower than every 2 s.
  const retryStrategy = (attempt: number) => Math.min(attempt * 100, 2000);
  // rejectUnauthorized is explicit so NODE_TLS_REJECT_UNAUTHORIZED=0 cannot turn verification off.
  const tls: RedisOptions['tls'] =
    options.tls === undefined
      ? undefined
      : {
          rejectUnauthorized: true,
          ...(options.tls.ca === undefined ? {} : { ca: options.tls.ca }),
          ...(options.tls.serverName === undefined ? {} : { servername: options.tls.serverName }),
        };

  if (options.clusterNodes !== undefined) {
    const clusterOptions: ClusterOptions = {
      enableOfflineQueue: false,
      ...autoPipelining,
      clusterRetryStrategy: retryStrategy,
      scaleReads: 'master',
      redisOptions: { ...connection, ...auth, ...(tls === undefined ? {} : { tls }) },
    };
    return new Cluster(options.clusterNodes.map((node) => ({ ...node })), clusterOptions);
  }
  if (options.sentinels !== undefined) {
    if (options.sentinelName === undefined) throw new Error('Redis Sentinel needs sentinelName');
    return new Redis({
      ...connection,
      ...auth,
      retryStrategy,
      sentinels: options.sentinels.map((sentinel) => ({ ...sentinel })),
      name: options.sentinelName,
      role: 'master',
      sentinelRetryStrategy: retryStrategy,
      // Listen for +switch-master on the Sentinels, so a failover moves us at once.
      failoverDetector: true,
      ...(options.sentinelUsername === undefined ? {} : { sentinelUsername: options.sentinelUsername }),
      ...(options.sentinelPassword === undefined ? {} : { sentinelPassword: options.sentinelPassword }),
      // tls is for the master the Sentinels name, sentinelTLS for the Sentinels themselves.
      ...(tls === undefined ? {} : { tls, enableTLSForSentinelMode: true, sentinelTLS: tls }),
    });
  }
  // The url's own settings win over these (ioredis); rediss:// turns TLS on, tls says how to verify.
  return new Redis(options.url ?? '', { ...connection, ...auth, retryStrategy, ...(tls === undefined ? {} : { tls }) });
}

/** Logs the connection's ups and downs once each, and checks the server's settings on each up. */
function watchConnection(client: Client, options: OpenRedisStorageOptions): void {
  const { logger } = options;
  let up = false;
  let lastPolicy: string | undefined;
  client.on('ready', () => {
    up = true;
    logger?.info({}, 'redis connection ready');
    void checkSettings(client)
      .then((settings) => {
        for (const policy of settings.evictionPolicies) {
          if (policy === 'noeviction' || policy === lastPolicy) continue;
          lastPolicy = policy;
          logger?.warn({ policy }, 'redis maxmemory-policy may evict credentials; set it to noeviction');
          options.onEvictionRisk?.(policy);
        }
        if (settings.appendonlyOff) logger?.warn({}, 'redis appendonly is off: a restart loses credentials');
      })
      .catch((error: unknown) => logger?.warn({ err: sanitize(error).message }, 'onEvictionRisk failed'));
  });
  client.on('error', (error: unknown) => {
    if (!up) return;
    up = false;
    logger?.warn({ err: sanitize(error).message }, 'redis connection lost; retrying');
  });
  client.on('close', () => {
    up = false;
  });
}

type Settings = { evictionPolicies: string[]; appendonlyOff: boolean };

/** Reads each master's settings; managed Redis may refuse CONFIG, which then says nothing. */
async function checkSettings(client: Client): Promise<Settings> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const settings: Settings = { evictionPolicies: [], appendonlyOff: false };
  await Promise.all(
    nodes.map(async (node) => {
      try {
        const policy = configValue(await node.config('GET', 'maxmemory-policy'));
        if (policy !== undefined) settings.evictionPolicies.push(policy);
        if (configValue(await node.config('GET', 'appendonly')) === 'no') settings.appendonlyOff = true;
      } catch {
        // CONFIG is often disabled on managed Redis: nothing to say then.
      }
    }),
  );
  return settings;
}

function configValue(reply: unknown): string | undefined {
  if (!Array.isArray(reply)) return undefined;
  const value: unknown = reply[1];
  return typeof value === 'string' ? value : undefined;
}

function defineScript(client: Client, name: string, source: ScriptSource): Script {
  const fixed = source.keys !== 'any';
  client.defineCommand(name, fixed ? { lua: source.lua, numberOfKeys: source.keys } : { lua: source.lua });
  const method: unknown = Reflect.get(client, name);
  if (typeof method !== 'function') throw new Error(`ioredis did not define ${name}`);
  // Without a fixed numberOfKeys, ioredis takes the count as the first argument.
  return async (keys, args) =>
    (await (fixed ? method.call(client, ...keys, ...args) : method.call(client, keys.length, ...keys, ...args))) as unknown;
}

function hashReply(reply: unknown, what: string): Record<string, string> | undefined {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) throw unexpected(what);
  const entries = Object.entries(reply);
  if (entries.length === 0) return undefined;
  const record: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (typeof value !== 'string') throw unexpected(what);
    record[name] = value;
  }
  return record;
}

function field(record: Record<string, string>, name: string, what: string): string {
  const value = record[name];
  if (value === undefined) throw new Error(`malformed ${what} record in Redis: no ${name}`);
  return value;
}

function finiteNumber(text: string, what: string): number {
  const value = Number(text);
  if (text === '' || !Number.isFinite(value)) throw new Error(`malformed ${what} record in Redis: not a number`);
  return value;
}

function strings(reply: unknown, what: string): string[] {
  if (!Array.isArray(reply)) throw unexpected(what);
  return (reply as unknown[]).map((item) => {
    if (typeof item !== 'string') throw unexpected(what);
    return item;
  });
}

function unexpected(what: string): Error {
  return new Error(`unexpected Redis reply (${what})`);
}

function sanitize(error: unknown): Error {
  return new Error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

