/**
 * AUTHGATE_STORE and the Redis topology settings: which store, and for Redis exactly one of a URL,
 * Sentinels or Cluster nodes with the credentials and options that topology uses (its TLS is
 * config/redis-tls.ts's). Read apart from config/load.ts; a refusal names its setting.
 */
import type { StoreConfig } from './config.js';
import { readRedisTls, type SettingsReader } from './redis-tls.js';

/**
 * Memory unless told otherwise outside production; production names its store (a Redis topology,
 * or memory on purpose). Redis takes exactly one topology, and Sentinel credentials only with Sentinels.
 */
export function readStore(reader: SettingsReader, production: boolean): StoreConfig {
  const { setting, given, fail, raw } = reader;
  const sentinels = setting('AUTHGATE_REDIS_SENTINELS');
  const clusterNodes = setting('AUTHGATE_REDIS_CLUSTER_NODES');
  // A URL counts as soon as it is set (its scheme is checked below); a list once it parses.
  const topologies = [given('AUTHGATE_REDIS_URL'), sentinels !== undefined, clusterNodes !== undefined].filter(Boolean).length;
  const chosen = setting('AUTHGATE_STORE');
  if (chosen === undefined && given('AUTHGATE_STORE')) return { kind: 'memory' }; // refused by its kind
  const kind = chosen ?? (topologies > 0 ? 'redis' : production ? undefined : 'memory');
  if (kind === undefined) {
    fail('AUTHGATE_STORE', 'must be set: production needs AUTHGATE_REDIS_URL, _SENTINELS or _CLUSTER_NODES, or AUTHGATE_STORE=memory on purpose');
    return { kind: 'memory' };
  }
  if (kind === 'memory') return { kind: 'memory' };
  if (topologies !== 1) {
    fail('AUTHGATE_STORE', 'redis needs exactly one of AUTHGATE_REDIS_URL, AUTHGATE_REDIS_SENTINELS, AUTHGATE_REDIS_CLUSTER_NODES');
  }
  const url = setting('AUTHGATE_REDIS_URL');
  const sentinelUsername = setting('AUTHGATE_REDIS_SENTINEL_USERNAME');
  const sentinelPassword = setting('AUTHGATE_REDIS_SENTINEL_PASSWORD');
  if (sentinels === undefined) {
    if (sentinelUsername !== undefined) fail('AUTHGATE_REDIS_SENTINEL_USERNAME', 'is only used with AUTHGATE_REDIS_SENTINELS');
    if (sentinelPassword !== undefined) fail('AUTHGATE_REDIS_SENTINEL_PASSWORD', 'is only used with AUTHGATE_REDIS_SENTINELS');
  } else if (sentinelUsername !== undefined && sentinelPassword === undefined) {
    fail('AUTHGATE_REDIS_SENTINEL_USERNAME', 'needs AUTHGATE_REDIS_SENTINEL_PASSWORD');
  }
  // As written, valid or not: a contradiction with the TLS setting is reported either way.
  const tls = readRedisTls(raw('AUTHGATE_REDIS_URL'), reader);
  const username = setting('AUTHGATE_REDIS_USERNAME');
  const password = setting('AUTHGATE_REDIS_PASSWORD');
  const optional = <T>(value: T | undefined) => (value === undefined ? {} : value);
  return {
    kind: 'redis',
    ...optional(url && { url }),
    ...optional(sentinels && { sentinels, sentinelName: setting('AUTHGATE_REDIS_SENTINEL_NAME') }),
    ...optional(sentinelUsername !== undefined && sentinels !== undefined && { sentinelUsername }),
    ...optional(sentinelPassword !== undefined && sentinels !== undefined && { sentinelPassword }),
    ...optional(clusterNodes && { clusterNodes }),
    ...optional(username !== undefined && { username }),
    ...optional(password !== undefined && { password }),
    ...optional(tls && { tls }),
    prefix: setting('AUTHGATE_REDIS_PREFIX'),
    commandTimeoutMs: setting('AUTHGATE_REDIS_TIMEOUT_MS'),
    waitReplicas: setting('AUTHGATE_REDIS_WAIT_REPLICAS'),
  };
}
