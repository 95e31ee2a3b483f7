/**
 * The audit trail is kept per organization (issue 26): each organization's events in their own
 * log with their own bound, and the events that concern no organization (a failed login by an
 * unknown e-mail) in one more. So one tenant's activity can only ever push out its own events.
 * A read of one organization reads its log; the admin-wide read merges every log, newest first,
 * with this one routine in both stores, so they page alike.
 */
import { AUDIT_SCAN_LIMIT, matchesAudit, type AuditPage, type AuditQuery, type StoredAuditEvent } from './audit.js';

/** One log as the merge reads it. */
export type AuditSource = Readonly<{
  /**
   * No entry of the log is later than this (epoch ms of its newest; Infinity when unknown): the
   * merge reads a log only once the events it has in hand are no later, so a page costs one read
   * per log that holds something newer than what the page returns.
   */
  newestMs: number;
  /** Up to `count` entries strictly before `before` (all when undefined), newest first. */
  read(before: string | undefined, count: number): Promise<StoredAuditEvent[]>;
}>;

/** An audit position `<ms>-<seq>` as a comparable pair. */
export function auditPosition(id: string): [number, number] {
  const [ms = '0', seq = '0'] = id.split('-');
  return [Number(ms), Number(seq)];
}

export function compareAuditIds(a: string, b: string): number {
  const [x, y] = [auditPosition(a), auditPosition(b)];
  return x[0] !== y[0] ? x[0] - y[0] : x[1] - y[1];
}

/**
 * A trail nobody appends to is dropped whole this long after the age bound passed its newest
 * event (a Redis stream's PEXPIRE): the grace keeps a just-appended event of a tiny age bound.
 */
export const AUDIT_EXPIRY_GRACE_MS = 60_000;

const CHUNK = 200;
/** Logs opened at once when several may hold the next event (one round trip each, in parallel). */
const OPEN_AT_ONCE = 16;

type Reader = { source: AuditSource; buffer: StoredAuditEvent[]; at: number; exhausted: boolean };

async function fill(reader: Reader, before: string | undefined): Promise<void> {
  reader.buffer = await reader.source.read(before, CHUNK);
  reader.at = 0;
  reader.exhausted = reader.buffer.length < CHUNK;
}

/**
 * The newest events of every source matching the query, at most `limit` (more only when
 * entries with the very same position end the page: two logs may each hold `<ms>-<seq>`, and a
 * cursor must not fall between them), and at most AUDIT_SCAN_LIMIT entries looked at. `next`
 * is the position of the last entry looked at, when anything older is left.
 */
export async function mergeAuditPage(sources: readonly AuditSource[], query: AuditQuery): Promise<AuditPage> {
  if (query.before !== undefined && !/^\d{1,20}-\d{1,20}$/.test(query.before)) throw new Error('an audit position is <ms>-<seq>');
  const waiting = [...sources].sort((a, b) => b.newestMs - a.newestMs);
  const open: Reader[] = [];
  const events: StoredAuditEvent[] = [];
  let scanned = 0;
  let last: string | null = null;

  const head = (reader: Reader) => reader.buffer[reader.at];
  const newest = (): Reader | undefined => {
    let best: Reader | undefined;
    for (const reader of open) {
      const entry = head(reader);
      if (entry !== undefined && (best === undefined || compareAuditIds(entry.id, head(best)!.id) > 0)) best = reader;
    }
    return best;
  };

  for (;;) {
    // Open every log that may hold something as new as the newest entry in hand.
    let top = newest();
    while (waiting.length > 0 && (top === undefined || waiting[0]!.newestMs >= auditPosition(head(top)!.id)[0])) {
      const bound = top === undefined ? -Infinity : auditPosition(head(top)!.id)[0];
      const batch: Reader[] = [];
      while (waiting.length > 0 && batch.length < OPEN_AT_ONCE && (batch.length === 0 || waiting[0]!.newestMs >= bound)) {
        batch.push({ source: waiting.shift()!, buffer: [], at: 0, exhausted: false });
      }
      await Promise.all(batch.map((reader) => fill(reader, query.before)));
      open.push(...batch);
      top = newest();
    }
    if (top === undefined) return { events, next: null };
    const entry = head(top)!;
    if ((events.length >= query.limit || scanned >= AUDIT_SCAN_LIMIT) && entry.id !== last) return { events, next: last };
    scanned++;
    last = entry.id;
    if (matchesAudit(entry, query)) events.push(entry);
    top.at++;
    if (top.at >= top.buffer.length && !top.exhausted) await fill(top, entry.id);
  }
}
