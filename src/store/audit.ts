/**
 * The audit trail's storage contract (issue 17): a bounded, ordered log of security events per
 * environment, newest read first. The Redis store keeps it in one Stream (XADD with an approximate
 * MAXLEN, trimmed by age with MINID); the memory store in a ring. Entries are what the gateway
 * decided to record: never a secret, a password or a token. The only e-mail in clear is the acting
 * member's (`actorDetail`, `member`): issue 50 asks the trail to name who did it, by id and e-mail
 * (NIST SP 800-53 AU-3(1)); an e-mail that was merely tried (a failed login) stays a digest.
 */

import { firstMemberId } from './members.js';

/**
 * Who acted, uniformly (issue 50): a member (its id and e-mail; the first member too), an API key
 * (its id and the member who created it), a provider token (issue 49), the operator (admin API),
 * the gateway itself (what it decided on its own: a key revoked on a leak report, a lockout), or
 * an unauthenticated client (a failed login: the network names it).
 */
export type AuditActor =
  | Readonly<{ type: 'member'; id: string; email: string }>
  | Readonly<{ type: 'api_key'; id: string; createdBy?: string }>
  | Readonly<{ type: 'issuer_token'; id: string }>
  | Readonly<{ type: 'operator' }>
  | Readonly<{ type: 'gateway' }>
  | Readonly<{ type: 'anonymous' }>;

/** One security event, as the gateway hands it to the store. */
export type AuditEvent = Readonly<{
  /** e.g. `login.succeeded`, `api_key.created`, `session.ended` (the README lists them). */
  type: string;
  /** Epoch ms. */
  at: number;
  /** The organization it concerns; absent for one that concerns none (a failed login by an unknown e-mail). */
  orgId?: string;
  /** Who acted: the organization (with a credential), the admin API, or nobody authenticated. */
  actor: 'organization' | 'admin' | 'anonymous';
  /** The acting credential, by kind and id (never the secret). */
  credential?: Readonly<{ kind: 'jwt' | 'api_key' | 'issuer_token'; id: string }>;
  /**
   * The member who acted, where a member of the organization did (issue 50): its id and e-mail,
   * so the trail answers "who did it" for a team (absent for the first member's sessions of
   * before members, for API keys and for the operator).
   */
  member?: Readonly<{ id: string; email: string }>;
  /**
   * Who acted, in one shape for every entry (issue 50); beside `actor`, `credential` and `member`,
   * which stay as they were for their readers. Absent only on entries written before it.
   */
  actorDetail?: AuditActor;
  /** The client's network, coarse (services/client-description.ts). */
  network?: string;
  /** Bounded details: ids, counts, reasons; never a secret. */
  details?: Readonly<Record<string, string | number | boolean | null | readonly string[]>>;
}>;

/** An event as stored: with its position (the stream id), which orders and pages the log. */
export type StoredAuditEvent = AuditEvent & Readonly<{ id: string }>;

export type AuditQuery = Readonly<{
  /** Only this organization's events. */
  orgId?: string;
  /** Only events of these types. */
  types?: readonly string[];
  /** Only events this member did (actingMemberOf). */
  memberId?: string;
  /** Only events older than this position (a previous page's `next`). */
  before?: string;
  limit: number;
}>;

export type AuditPage = Readonly<{ events: StoredAuditEvent[]; next: string | null }>;

/** How much of the log is kept: the newest `maxEvents`, and none older than `maxAgeMs`. */
export type AuditRetention = Readonly<{ maxEvents: number; maxAgeMs: number }>;

export interface AuditStore {
  /** Appends the events in order, each after every earlier one; trims to the retention. */
  appendAuditEvents(events: readonly AuditEvent[], retention: AuditRetention): Promise<void>;
  /**
   * The newest events matching the query, at most `limit`, newest first; `next` continues below the
   * last one scanned (a page may hold fewer than `limit` and still have a next: a filtered read
   * scans a bounded number of entries per call).
   */
  readAuditEvents(query: AuditQuery): Promise<AuditPage>;
}

/** Whether an event matches a query's filters (both stores filter the same way). */
export function matchesAudit(event: AuditEvent, query: Pick<AuditQuery, 'orgId' | 'types' | 'memberId'>): boolean {
  return (
    (query.orgId === undefined || event.orgId === query.orgId) &&
    (query.types === undefined || query.types.includes(event.type)) &&
    (query.memberId === undefined || actingMemberOf(event) === query.memberId)
  );
}

/**
 * The member who did an event: its `actorDetail`'s; for an entry written before it, its `member`,
 * else, for a login token's, the organization's first member (before members every session was
 * its; since, another member's entries carry `member`). API keys, the operator: no member.
 */
export function actingMemberOf(event: AuditEvent): string | undefined {
  if (event.actorDetail !== undefined) return event.actorDetail.type === 'member' ? event.actorDetail.id : undefined;
  if (event.member !== undefined) return event.member.id;
  return event.credential?.kind === 'jwt' && event.orgId !== undefined ? firstMemberId(event.orgId) : undefined;
}

/** How many entries one filtered read scans at most, before it returns a page with a `next`. */
export const AUDIT_SCAN_LIMIT = 5_000;
