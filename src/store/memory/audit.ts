/**
 * The memory store's audit trail (store/audit.ts): one log per organization, and one for events of
 * no organization, each bounded by the retention on its own (store/audit-merge.ts says why).
 * Ids are `<ms>-<seq>` as a Redis Stream's, from one clock for every log, so they never repeat.
 */
import { type AuditStore, type StoredAuditEvent } from '../audit.js';
import { AUDIT_EXPIRY_GRACE_MS, auditPosition, compareAuditIds, mergeAuditPage, type AuditSource } from '../audit-merge.js';

/** The key of the log of events that concern no organization (an organization id is never empty). */
const NO_ORGANIZATION = '';

export function createMemoryAudit(now: () => number): AuditStore {
  /** Per organization, oldest first; the Map in order of each log's last append, oldest first. */
  const logs = new Map<string, StoredAuditEvent[]>();
  let lastMs = 0;
  let lastSeq = 0;

  function sourceOf(log: StoredAuditEvent[]): AuditSource {
    return {
      newestMs: log.length === 0 ? -Infinity : auditPosition(log[log.length - 1]!.id)[0],
      async read(before, count) {
        // The first entry at or after `before` (binary search: ids ascend), then older ones.
        let end = log.length;
        if (before !== undefined) {
          let lo = 0;
          while (lo < end) {
            const mid = (lo + end) >> 1;
            if (compareAuditIds(log[mid]!.id, before) < 0) lo = mid + 1;
            else end = mid;
          }
        }
        return log.slice(Math.max(0, end - count), end).reverse();
      },
    };
  }

  return {
    async appendAuditEvents(events, retention) {
      const t = now();
      const oldest = t - retention.maxAgeMs;
      for (const event of events) {
        const ms = Math.max(t, lastMs);
        lastSeq = ms === lastMs ? lastSeq + 1 : 0;
        lastMs = ms;
        const name = event.orgId ?? NO_ORGANIZATION;
        const log = logs.get(name) ?? [];
        // Deleted and set again: the Map stays in the order of each log's last append.
        logs.delete(name);
        logs.set(name, log);
        log.push({ ...event, id: `${ms}-${lastSeq}` });
      }
      for (const name of new Set(events.map((event) => event.orgId ?? NO_ORGANIZATION))) {
        const log = logs.get(name)!;
        let drop = Math.max(0, log.length - retention.maxEvents);
        while (drop < log.length && auditPosition(log[drop]!.id)[0] < oldest) drop++;
        if (drop > 0) log.splice(0, drop);
      }
      // Logs nobody appended to within the age bound are all past it: gone, as a Redis stream's
      // expiry drops it (the oldest appended-to first, so this stops at the first young one).
      for (const [name, log] of logs) {
        const newest = log[log.length - 1];
        if (newest !== undefined && auditPosition(newest.id)[0] >= oldest - AUDIT_EXPIRY_GRACE_MS) break;
        logs.delete(name);
      }
    },

    async readAuditEvents(query) {
      if (query.orgId !== undefined) {
        const log = logs.get(query.orgId);
        return mergeAuditPage(log === undefined ? [] : [sourceOf(log)], query);
      }
      return mergeAuditPage([...logs.values()].map(sourceOf), query);
    },
  };
}
