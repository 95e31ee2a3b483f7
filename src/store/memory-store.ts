import {
  byCreatedAtThenId,
  type AttemptVerdict,
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
import { restAfterOrganizationTag } from './shard-tag.js';

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
  /**
   * Known set → member → when last remembered (epoch ms), oldest first (a Map keeps insertion
   * order); the whole set is forgotten ttlMs after its last remember, as a Redis PEXPIRE does.
   */
  const knownSets = new Map<string, { seen: Map<string, number>; expiresAt: number }>();

  // Sessions of tokens nobody logs out of would otherwise stay forever.
  const sweeper = setInterval(() => {
    const t = now();
    for (const session of sessions.values()) if (session.expiresAt <= t) forgetSession(session);
    for (const [key, counter] of counters) if (counter.resetAt <= t) counters.delete(key);
    for (const [name, known] of knownSets) if (known.expiresAt <= t) knownSets.delete(name);
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();

  function forgetSession(session: Session): void {
    sessions.delete(session.id);
    sessionIdsByOrg.get(session.orgId)?.delete(session.id);
  }

  function liveCounter(name: string, t: number): { count: number; resetAt: number } | undefined {
    const counter = counters.get(name);
    return counter === undefined || counter.resetAt <= t ? undefined : counter;
  }

  function isKnownMember(name: string, member: string, seenAfter: number, t: number): boolean {
    const set = knownSets.get(name);
    const seenAt = set === undefined || set.expiresAt <= t ? undefined : set.seen.get(member);
    return seenAt !== undefined && seenAt > seenAfter;
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
      restAfterOrganizationTag(key.hash, key.orgId, 'the API key'); // the Redis store's contract, kept here too
      const index = keyHashesByOrg.get(key.orgId);
      if (index === undefined) return 'no-organization';
      keysByHash.set(key.hash, key);
      index.set(key.id, key.hash);
      return 'created';
    },

    async findApiKeyByHash(hash) {
      const key = keysByHash.get(hash);
      if (key === undefined) return undefined;
      return key.expiresAt === undefined
        ? { id: key.id, orgId: key.orgId, hash: key.hash }
        : { id: key.id, orgId: key.orgId, hash: key.hash, expiresAt: key.expiresAt };
    },

    async listApiKeys(orgId) {
      const summaries: ApiKeySummary[] = [];
      for (const hash of keyHashesByOrg.get(orgId)?.values() ?? []) {
        const key = keysByHash.get(hash);
        if (key !== undefined) summaries.push(summaryOf(key));
      }
      return summaries.sort(byCreatedAtThenId);
    },

    async findApiKeySummary(orgId, keyId) {
      const hash = keyHashesByOrg.get(orgId)?.get(keyId);
      const key = hash === undefined ? undefined : keysByHash.get(hash);
      return key === undefined ? undefined : summaryOf(key);
    },

    async renameApiKey(orgId, keyId, name) {
      if (name === '') throw new Error('an API key\'s name must not be empty (null removes it)');
      const hash = keyHashesByOrg.get(orgId)?.get(keyId);
      const key = hash === undefined ? undefined : keysByHash.get(hash);
      if (hash === undefined || key === undefined) return undefined;
      const { name: _previous, ...rest } = key;
      const renamed: ApiKeyRecord = name === null ? rest : { ...rest, name };
      keysByHash.set(hash, renamed);
      return summaryOf(renamed);
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
      restAfterOrganizationTag(session.id, session.orgId, 'the session id');
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

    // Synchronous from start to end: no other attempt can run between the check and the count.
    async countAttempt({ counters: limited, windowMs, known }): Promise<AttemptVerdict> {
      const t = now();
      const isKnown = known !== undefined && isKnownMember(known.set, known.member, t - known.knownTtlMs, t);
      const applying = limited.filter((counter) => !(isKnown && counter.exemptWhenKnown === true));
      let retryInMs = 0;
      for (const { name, limit } of applying) {
        const counter = liveCounter(name, t);
        if ((counter?.count ?? 0) >= limit) retryInMs = Math.max(retryInMs, counter === undefined ? windowMs : counter.resetAt - t);
      }
      if (retryInMs > 0) return { allowed: false, retryInMs };
      let exhausted = false;
      for (const { name, limit } of applying) {
        let counter = liveCounter(name, t);
        if (counter === undefined) {
          counter = { count: 0, resetAt: t + windowMs };
          counters.set(name, counter);
        }
        counter.count++;
        if (counter.count >= limit) exhausted = true;
      }
      return { allowed: true, known: isKnown, counted: applying.map((counter) => counter.name), exhausted };
    },

    async settleAttempt({ reset = [], giveBack = [], remember }) {
      const t = now();
      for (const name of reset) counters.delete(name);
      for (const name of giveBack) {
        const counter = liveCounter(name, t);
        if (counter !== undefined && counter.count > 0) counter.count--;
      }
      if (remember !== undefined) {
        let known = knownSets.get(remember.set);
        if (known === undefined || known.expiresAt <= t) knownSets.set(remember.set, (known = { seen: new Map(), expiresAt: 0 }));
        known.expiresAt = t + remember.ttlMs;
        known.seen.delete(remember.member); // re-inserted last: the most recent
        known.seen.set(remember.member, t);
        for (const [member, seenAt] of known.seen) {
          if (known.seen.size > remember.max || seenAt <= t - remember.ttlMs) known.seen.delete(member);
        }
      }
    },

    async readCounters(names) {
      const t = now();
      return names.map((name): CounterState => {
        const counter = liveCounter(name, t);
        return counter === undefined ? { count: 0, resetInMs: 0 } : { count: counter.count, resetInMs: counter.resetAt - t };
      });
    },

    async ping() {},

    async close() {
      clearInterval(sweeper);
    },
  };
}

/** A key as listApiKeys shows it: no hash, no organization. */
function summaryOf(key: ApiKeyRecord): ApiKeySummary {
  return {
    id: key.id,
    displayPrefix: key.displayPrefix,
    createdAt: key.createdAt,
    ...(key.name !== undefined && { name: key.name }),
    ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
  };
}
