/**
 * The audit trail's storage contract (issue 17): a bounded, ordered log of security events per
 * environment, newest read first. The Redis store keeps it in one Stream (XADD with an approximate
 * MAXLEN, trimmed by age with MINID); the memory store in a ring. Entries are what the gateway
 * decided to record: never a secret, a password, a token or an e-mail in clear.
 */

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
export function matchesAudit(event: AuditEvent, query: Pick<AuditQuery, 'orgId' | 'types'>): boolean {
  return (query.orgId === undefined || event.orgId === query.orgId) && (query.types === undefined || query.types.includes(event.type));
}

/** How many entries one filtered read scans at most, before it returns a page with a `next`. */
export const AUDIT_SCAN_LIMIT = 5_000;
