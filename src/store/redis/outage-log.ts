/**
 * What an operator sees while Redis cannot be reached: one warning at the first failed attempt
 * (with where the gateway is trying to connect and why it failed), then one at most every
 * `everyMs` while it lasts (ioredis retries every 2 s at most: a line per attempt would flood),
 * and one line when the connection is ready again. Without it, a gateway that never reached its
 * Redis logged nothing at all while /readyz said 503.
 */
import type { RedisConnectionConfig } from '../../config/config.js';
import { describe, type Logger } from './support.js';

export const OUTAGE_LOG_EVERY_MS = 15_000;

/**
 * Where the client connects, for a log line: host:port only. Never the URL as written, which
 * may carry the password (redis://:password@host).
 */
export function redisAddress(options: Pick<RedisConnectionConfig, 'url' | 'sentinels' | 'clusterNodes'> & { sentinelName?: string }): string {
  const list = (nodes: readonly { host: string; port: number }[]) => nodes.map((node) => `${node.host}:${node.port}`).join(',');
  if (options.sentinels !== undefined) return `sentinels ${list(options.sentinels)} (master ${options.sentinelName ?? '?'})`;
  if (options.clusterNodes !== undefined) return `cluster ${list(options.clusterNodes)}`;
  if (options.url !== undefined && URL.canParse(options.url)) {
    const url = new URL(options.url);
    return `${url.hostname}:${url.port === '' ? 6379 : url.port}`;
  }
  return 'redis';
}

export type OutageLog = {
  /** A connection that was up is lost (logged by the caller): the next line comes after everyMs. */
  lost(): void;
  failed(error: unknown): void;
  ready(): void;
};

export function createOutageLog(logger: Logger | undefined, address: string, everyMs = OUTAGE_LOG_EVERY_MS, now: () => number = Date.now): OutageLog {
  let since: number | undefined;
  let lastLogged = 0;
  let failures = 0;
  return {
    lost() {
      since = lastLogged = now();
      failures = 0;
    },
    failed(error) {
      const at = now();
      failures += 1;
      if (since === undefined) since = at;
      else if (at - lastLogged < everyMs) return;
      lastLogged = at;
      logger?.warn(
        { event: 'redis_unreachable', address, failedAttempts: failures, downForMs: at - since, err: describe(error) },
        `redis unreachable at ${address}: ${describe(error)}; retrying (readiness fails until it is back)`,
      );
      failures = 0;
    },
    ready() {
      if (since === undefined) return;
      logger?.info({ event: 'redis_reachable', address, downForMs: now() - since }, `redis reachable again at ${address}`);
      since = undefined;
      failures = 0;
    },
  };
}
