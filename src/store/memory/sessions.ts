/** The memory store's login sessions (store/sessions.ts SessionStore). */
import type { Revoked } from '../store.js';
import { latestLoginFirst, type Session, type SessionStore, type SessionSummary } from '../sessions.js';
import { restAfterOrganizationTag } from '../shard-tag.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memorySessions(state: MemoryState): MemoryPart<SessionStore> {
  const { now, sessions, sessionIdsByOrg } = state;

  function forgetSession(session: Session): void {
    sessions.delete(session.id);
    sessionIdsByOrg.get(session.orgId)?.delete(session.id);
  }

  function liveSession(sessionId: string): Session | undefined {
    const session = sessions.get(sessionId);
    if (session === undefined) return undefined;
    if (session.expiresAt <= now()) {
      forgetSession(session);
      return undefined;
    }
    return session;
  }

  return {
    sweep: (t) => {
      for (const session of sessions.values()) if (session.expiresAt <= t) forgetSession(session);
    },
    methods: {
      async createSession(session, maxSessions) {
        restAfterOrganizationTag(session.id, session.orgId, 'the session id');
        const index = sessionIdsByOrg.get(session.orgId);
        if (index === undefined) return 'no-organization';
        if (maxSessions !== undefined) {
          // Live ones only, as the Redis store prunes the expired before it counts.
          for (const id of [...index]) liveSession(id);
          if (index.size >= maxSessions) return 'limit-reached';
        }
        sessions.set(session.id, session);
        index.add(session.id);
        return 'created';
      },

      async findSession(sessionId) {
        return liveSession(sessionId);
      },

      async deleteSession(sessionId) {
        const session = liveSession(sessionId);
        if (session === undefined) return undefined;
        forgetSession(session);
        return { kind: 'session', cacheKey: sessionId };
      },

      async listSessions(orgId) {
        const live: SessionSummary[] = [];
        for (const id of [...(sessionIdsByOrg.get(orgId) ?? [])]) {
          const session = liveSession(id);
          if (session === undefined) continue;
          live.push({
            id: session.id,
            expiresAt: session.expiresAt,
            ...(session.createdAt !== undefined && { createdAt: session.createdAt }),
            ...(session.client !== undefined && { client: session.client }),
          });
        }
        return live.sort(latestLoginFirst);
      },

      async deleteSessionIfOwned(orgId, sessionId) {
        const session = liveSession(sessionId);
        if (session === undefined || session.orgId !== orgId) return undefined;
        forgetSession(session);
        return { kind: 'session', cacheKey: sessionId };
      },

      async deleteAllSessions(orgId) {
        const revoked: Revoked[] = [];
        for (const id of [...(sessionIdsByOrg.get(orgId) ?? [])]) {
          const session = sessions.get(id);
          if (session === undefined) continue;
          forgetSession(session);
          revoked.push({ kind: 'session', cacheKey: id });
        }
        return revoked;
      },
    },
  };
}
