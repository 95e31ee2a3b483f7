/**
 * The Redis store's audit trail (store/audit.ts): one stream per organization, on the
 * organization's shard (`<base>o:<org>:a`), and one for the events of no organization (`<base>a`
 * under the tag of the text `audit`), each trimmed to the retention on its own; beside that one, a
 * sorted set of the organizations with a trail, by the time of their last append, which the
 * admin-wide read merges from (store/audit-merge.ts). docs/redis-layout.md has the names.
 */
import type { AuditStore } from '../audit.js';
import { AUDIT_EXPIRY_GRACE_MS, auditPosition, mergeAuditPage, type AuditSource } from '../audit-merge.js';
import { shardTagOf } from '../shard-tag.js';
import type { Client } from './connection.js';
import type { RedisKeys } from './keys.js';
import { packId } from './packing.js';
import { auditEntries, unexpected } from './replies.js';
import type { Script } from './scripts.js';

export function redisAudit(deps: {
  client: Client;
  keys: RedisKeys;
  appendScript: Script;
  now: () => number;
  guard: <T>(operation: string, work: () => Promise<T>) => Promise<T>;
}): AuditStore {
  const { client, keys, appendScript, now, guard } = deps;
  const streamOf = (orgId: string | undefined) => (orgId === undefined ? keys.auditStream : keys.shard(shardTagOf(orgId)).organizationAudit(packId(orgId)));

  function source(stream: string, newestMs: number): AuditSource {
    return {
      newestMs,
      read: async (before, count) => auditEntries(await client.xrevrange(stream, before === undefined ? '+' : `(${before}`, '-', 'COUNT', count)),
    };
  }

  return {
    /** One script per stream (an organization's events on its shard), then the index of trails. */
    appendAuditEvents: (events, retention) =>
      guard('appendAuditEvents', async () => {
        if (events.length === 0) return;
        const oldest = Math.max(0, Math.floor(now() - retention.maxAgeMs));
        // Sequence numbers unique in the environment, in the batch's order: the ids' second part.
        let seq = (await client.incrby(keys.auditSequence, events.length)) - events.length;
        const numbered = new Map<string | undefined, (string | number)[]>();
        for (const event of events) {
          const list = numbered.get(event.orgId) ?? [];
          numbered.set(event.orgId, list);
          list.push(++seq, JSON.stringify(event));
        }
        const appended = await Promise.all([...numbered.keys()].map(async (orgId) => {
          const last = await appendScript([streamOf(orgId)], [
            Math.max(1, Math.floor(retention.maxEvents)),
            `${oldest}-0`,
            Math.max(1, Math.ceil(retention.maxAgeMs)) + AUDIT_EXPIRY_GRACE_MS,
            ...numbered.get(orgId)!,
          ]);
          if (typeof last !== 'string' || !/^\d+-\d+$/.test(last)) throw unexpected('appendAuditEvents');
          return [orgId, auditPosition(last)[0]] as const;
        }));
        // After the appends, scored by what Redis stamped: the admin read trusts the score as the
        // newest time in the trail. A crash before this leaves the newest events out of the
        // admin-wide read until the organization's next append (its own read has them).
        const indexed = appended.filter((entry): entry is readonly [string, number] => entry[0] !== undefined);
        if (indexed.length > 0) {
          await client.zadd(keys.auditIndex, 'GT', ...indexed.flatMap(([orgId, ms]) => [ms, orgId]));
          await client.zremrangebyscore(keys.auditIndex, '-inf', `(${oldest - AUDIT_EXPIRY_GRACE_MS}`);
        }
      }),

    /**
     * One organization's: its stream. Everyone's: the stream of no organization and every
     * indexed trail, merged newest first (a read of each trail that may hold the page's events).
     */
    readAuditEvents: (query) =>
      guard('readAuditEvents', async () => {
        if (query.orgId !== undefined) return mergeAuditPage([source(streamOf(query.orgId), Infinity)], query);
        const index = await client.zrevrange(keys.auditIndex, 0, -1, 'WITHSCORES');
        const sources = [source(keys.auditStream, Infinity)];
        for (let i = 0; i + 1 < index.length; i += 2) sources.push(source(streamOf(index[i]!), Number(index[i + 1])));
        return mergeAuditPage(sources, query);
      }),
  };
}
