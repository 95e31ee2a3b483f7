import {
  type CounterState,
  type CounterStore,
  type ApiKeyRecord,
  type ApiKeySummary,
  type NewOrganization,
  type Organization,
  type Revoked,
  type Session,
  type Store,
} from './store.js';

export type MemoryStoreOptions = { now?: () => number; sweepIntervalMs?: number };

/**
 * The embedded default: everything in this process, gone when it exits. Every method runs to
 * completion without awaiting anything, which is what makes each one atomic here.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store & CounterStore {
  const now = options.now ?? Date.now;
  const orgsById = new Map<string, Organization>();
  const orgIdByEmail = new Map<string, string>();
  const keysByHash = new Map<string, ApiKeyRecord>();
  const keyHashesByOrg = new Map<string, Map<string, string>>(); // orgId → keyId → hash
  const sessions = new Map<string, Session>();
  const sessionIdsByOrg = new Map<string, Set<string>>();
  const counters = new Map<string, { count: number; resetAt: number }>();

  // Sessions of tokens nobody logs out of would otherwise stay forever.
  const sweeper = setInterval(() => {
    const t = now();
    for (const session of sessions.values()) if (session.expiresAt <= t) forgetSession(session);
    for (const [key, counter] of counters) if (counter.resetAt <= t) counters.delete(key);
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();

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
    async createOrganizationIfEmailFree(org: NewOrganization) {
      if (orgIdByEmail.has(org.email)) return 'email-taken';
      orgsById.set(org.id, org);
      orgIdByEmail.set(org.email, org.id);
      keyHashesByOrg.set(org.id, new Map());
      sessionIdsByOrg.set(org.id, new Set());
      return org;
    },

    async findOrganizationByEmail(email) {
      const id = orgIdByEmail.get(email);
      return id === undefined ? undefined : orgsById.get(id);
    },

    async findOrganizationById(orgId) {
      return orgsById.get(orgId);
    },

    async deleteOrganization(orgId) {
      const org = orgsById.get(orgId);
      if (org === undefined) return undefined;
      const revoked: Revoked[] = [];
      for (const hash of keyHashesByOrg.get(orgId)?.values() ?? []) {
        keysByHash.delete(hash);
        revoked.push({ kind: 'api_key', cacheKey: hash });
      }
      for (const sessionId of sessionIdsByOrg.get(orgId) ?? []) {
        sessions.delete(sessionId);
        revoked.push({ kind: 'session', cacheKey: sessionId });
      }
      keyHashesByOrg.delete(orgId);
      sessionIdsByOrg.delete(orgId);
      orgIdByEmail.delete(org.email);
      orgsById.delete(orgId);
      return revoked;
    },

    async createApiKey(key) {
      const index = keyHashesByOrg.get(key.orgId);
      if (index === undefined) return 'no-organization';
      keysByHash.set(key.hash, key);
      index.set(key.id, key.hash);
      return 'created';
    },

    async findApiKeyByHash(hash) {
      return keysByHash.get(hash);
    },

    async listApiKeys(orgId) {
      const summaries: ApiKeySummary[] = [];
      for (const hash of keyHashesByOrg.get(orgId)?.values() ?? []) {
        const key = keysByHash.get(hash);
        if (key !== undefined) {
          summaries.push({ id: key.id, displayPrefix: key.displayPrefix, createdAt: key.createdAt });
        }
      }
      return summaries.sort(byCreatedAtThenId);
    },

    async deleteApiKeyIfOwned(orgId, keyId) {
      const index = keyHashesByOrg.get(orgId);
      const hash = index?.get(keyId);
      if (index === undefined || hash === undefined) return undefined;
      index.delete(keyId);
      keysByHash.delete(hash);
      return { kind: 'api_key', cacheKey: hash };
    },

    async createSession(session) {
      const index = sessionIdsByOrg.get(session.orgId);
      if (index === undefined) return 'no-organization';
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

    async incrementCounters(keys, windowMs) {
      const t = now();
      return keys.map((key): CounterState => {
        let counter = counters.get(key);
        if (counter === undefined || counter.resetAt <= t) {
          counter = { count: 0, resetAt: t + windowMs };
          counters.set(key, counter);
        }
        counter.count++;
        return { count: counter.count, resetInMs: counter.resetAt - t };
      });
    },

    async readCounters(keys) {
      const t = now();
      return keys.map((key): CounterState => {
        const counter = counters.get(key);
        return counter === undefined || counter.resetAt <= t ? { count: 0, resetInMs: 0 } : { count: counter.count, resetInMs: counter.resetAt - t };
      });
    },

    async resetCounters(keys) {
      for (const key of keys) counters.delete(key);
    },

    async ping() {},

    async close() {
      clearInterval(sweeper);
    },
  };
}

export function byCreatedAtThenId(a: ApiKeySummary, b: ApiKeySummary): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
