/**
 * The Redis connection: one client in any of the three topologies (standalone, Sentinel,
 * Cluster), with TLS and auth, that fails fast instead of queueing; the log of its ups and downs;
 * the audit of the server settings a credential store depends on; and a polite quit.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisConnectionConfig } from '../../config/config.js';
import { createOutageLog, redisAddress } from './outage-log.js';
import { describe, withDeadline, type Logger } from './support.js';

/** The connection settings, as the config defines them (config/config.ts). */
export type RedisConnectionOptions = RedisConnectionConfig;

export type Client = Redis | Cluster;

/**
 * Opens the client; it connects (and reconnects) on its own. `scriptNames` are the commands the
 * Lua scripts are defined as, kept out of auto-pipelining.
 */
export function connect(options: RedisConnectionOptions, scriptNames: readonly string[]): Client {
  const ways = [options.url, options.sentinels, options.clusterNodes].filter((way) => way !== undefined);
  if (ways.length !== 1) {
    throw new Error('Redis needs exactly one of: url, sentinels (with sentinelName), clusterNodes');
  }
  /**
   * Commands issued in the same event-loop turn leave in one write: under load many requests
   * miss the cache in one turn, and their reads then share a round trip and a syscall. The Lua
   * scripts stay out of it: they are writes, off the request path, and ioredis sends a pipelined
   * script differently (SCRIPT EXISTS/LOAD first, remembered per connection) from a plain call's
   * EVALSHA with its EVAL fallback, which is what the failover tests exercise.
   *
   * HGET, the credential's point read (an API key's, a session's), stays out too (issue 45): each
   * auto-pipeline is an ioredis Pipeline, which copies every defined script (two methods each, 38
   * scripts) onto itself and keeps a promise chain per command, and under a flood of unknown keys
   * nearly every read is a turn of its own. Sampled on Node 24 (the inspector's sampling heap
   * profiler, objects that survived scavenges and died in a full GC), most of what 50,000 distinct
   * unknown keys promoted to old space was these pipelines and their replies' handling; with HGET
   * sent as a plain command, the flood's RSS growth went from 168–190 MiB to 68 MiB
   * (docs/performance.md, "Memory under a flood").
   */
  const autoPipelining = {
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: [...scriptNames, 'hget'],
  } satisfies RedisOptions & ClusterOptions;
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
      // No auto-pipelining on Cluster: ioredis groups a turn's commands by the slot map, and while
      // a failover has emptied an entry of it, executeWithAutoPipelining throws an uncaught
      // TypeError (`client.slots[slot]` undefined: seen in the SIGKILL failover test), which
      // would end the process; with topology changes its pipelines also fail as a whole
      // (ioredis #2075). Each command goes on its own, routed and retried on MOVED by itself.
      enableAutoPipelining: false,
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

export type WatchOptions = Pick<RedisConnectionOptions, 'url' | 'sentinels' | 'clusterNodes' | 'sentinelName'> & {
  /** Called on each (re)connect whose maxmemory-policy may evict credentials, after the warning is logged. */
  onEvictionRisk?: (policy: string) => void;
  logger?: Logger;
};

/** Logs the connection's ups and downs once each, and checks the server's settings on each up. */
export function watchConnection(client: Client, options: WatchOptions): void {
  const { logger } = options;
  let up = false;
  let lastPolicy: string | undefined;
  const outage = createOutageLog(logger, redisAddress(options));
  client.on('ready', () => {
    up = true;
    outage.ready();
    logger?.info({}, 'redis connection ready');
    void checkSettings(client)
      .then((settings) => {
        for (const policy of settings.evictionPolicies) {
          if (policy === 'noeviction' || policy === lastPolicy) continue;
          lastPolicy = policy;
          logger?.warn(
            { event: 'redis_eviction_risk', policy },
            `Redis maxmemory-policy is ${policy}: it may evict credentials (a deleted key's revocation, a live session); set noeviction`,
          );
          options.onEvictionRisk?.(policy);
        }
        if (settings.appendonlyOff) logger?.warn({}, 'redis appendonly is off: a restart loses credentials');
      })
      .catch((error: unknown) => logger?.warn({ err: describe(error) }, 'onEvictionRisk failed'));
  });
  client.on('error', (error: unknown) => {
    if (!up) {
      outage.failed(error); // never connected yet, or still down: at once, then at a bounded rate
      return;
    }
    up = false;
    outage.lost();
    logger?.warn({ err: describe(error) }, 'redis connection lost; retrying');
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

/** CONFIG GET answers [name, value]. */
function configValue(reply: unknown): string | undefined {
  if (!Array.isArray(reply)) return undefined;
  const value: unknown = reply[1];
  return typeof value === 'string' ? value : undefined;
}

/** Quits politely, but never waits long for a server that is gone. */
export async function quitRedisConnection(client: Client): Promise<void> {
  try {
    await withDeadline<unknown>(() => client.quit(), 1000, () => undefined);
  } catch {
    // Not connected: disconnect() below stops the reconnecting.
  } finally {
    // A handshake still under way when the connection is dropped can fail after ioredis stopped
    // listening to its socket (a TLS alert from a server whose certificate was refused, arriving
    // once the socket's one error listener has fired): an 'error' nobody hears ends the process.
    // Once closing, the socket's errors are nobody's concern.
    if (client instanceof Redis) client.stream?.on('error', ignoreError);
    client.disconnect();
  }
}

const ignoreError = () => {};
