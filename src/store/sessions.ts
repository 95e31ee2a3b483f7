/**
 * The session part of the store contract (store.ts Store): login sessions, their listing order
 * and the methods. Implemented by memory/sessions.ts and redis/sessions.ts.
 */
import type { Revoked } from './store.js';

export type Session = Readonly<{
  /** `<shard tag>.<random>`, the tag the organization's (shardTagOf(orgId)), as an API key's hash. */
  id: string;
  orgId: string;
  /** Epoch milliseconds; the store forgets the session after this. */
  expiresAt: number;
  /** Epoch milliseconds of the login; absent for a session stored without it. */
  createdAt?: number;
  /**
   * A coarse description of the client that logged in (`curl from 203.0.113.0/24`): for its owner
   * to recognise it in a listing; never a token, never a whole address. At most 100 characters.
   */
  client?: string;
}>;

/** A live session as its organization's listing shows it (listSessions). */
export type SessionSummary = Readonly<{ id: string; expiresAt: number; createdAt?: number; client?: string }>;

/** The order sessions are listed in: the latest login first, ties by id (descending). */
export function latestLoginFirst(a: SessionSummary, b: SessionSummary): number {
  const x = a.createdAt ?? 0;
  const y = b.createdAt ?? 0;
  return x !== y ? y - x : a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

export interface SessionStore {
  /**
   * Creates a session that the store forgets at session.expiresAt; fails if the org is gone.
   * Rejects (throws) a session whose id does not carry its organization's shard tag. With
   * `maxSessions`, refuses ('limit-reached') when the organization has that many live sessions,
   * counted in the same atomic step as the write.
   */
  createSession(session: Session, maxSessions?: number): Promise<'created' | 'no-organization' | 'limit-reached'>;
  findSession(sessionId: string): Promise<Session | undefined>;
  deleteSession(sessionId: string): Promise<Revoked | undefined>;
  /** The organization's live sessions, the latest login first. */
  listSessions(orgId: string): Promise<SessionSummary[]>;
  /** Ends the session only if it is orgId's and live; undefined otherwise (unknown, another's, ended). */
  deleteSessionIfOwned(orgId: string, sessionId: string): Promise<Revoked | undefined>;
  /** Ends every session of the organization in one atomic step; what it revoked. API keys stay. */
  deleteAllSessions(orgId: string): Promise<Revoked[]>;
}
