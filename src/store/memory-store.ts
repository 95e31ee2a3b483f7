import {
  changedTerms,
  latestLoginFirst,
  newestFirst,
  sameScopes,
  storedScopes,
  type AttemptVerdict,
  type CounterState,
  type ApiKeyRecord,
  type ApiKeySummary,
  type NewOrganization,
  type Organization,
  type Revoked,
  type GatewayStore,
  type Session,
  type SessionSummary,
} from './store.js';
import { createMemoryAudit } from './memory-audit.js';
import { listOrganizationsIn } from './organization-listing.js';
import { grantOf, type StoredLimit } from './rate-limits.js';
import { restAfterOrganizationTag } from './shard-tag.js';

export type MemoryStoreOptions = { now?: () => number; sweepIntervalMs?: number };

/**
 * The embedded default: everything in this process, gone when it exits. Every method runs to
 * completion without awaiting anything, which is what makes each one atomic here.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): GatewayStore {
  const now = options.now ?? Date.now;
  const orgsById = new Map<string, Organization>();
  const orgIdByEmail = new Map<string, string>();
  const keysByHash = new Map<string, ApiKeyRecord>();
  const keyHashesByOrg = new Map<string, Map<string, string>>(); // orgId → keyId → hash
  const lastUsedByKey = new Map<string, number>(); // keyId → epoch ms
  const sessions = new Map<string, Session>();
  const sessionIdsByOrg = new Map<string, Set<string>>();
  const counters = new Map<string, { count: number; resetAt: number }>();
  /**
   * Known set → member → when last remembered (epoch ms), oldest first (a Map keeps insertion
   * order); the whole set is forgotten ttlMs after its last remember, as a Redis PEXPIRE does.
   */
  const knownSets = new Map<string, { seen: Map<string, number>; expiresAt: number }>();
  /** The audit trail: one bounded log per organization (memory-audit.ts). */
  const audit = createMemoryAudit(now);
  /** Organizations' own API-key limits (setKeyLimit); gone with the organization. */
  const keyLimits = new Map<string, number>();
  /**
   * The rate-limit overrides. Nothing announces a change here: this store has no bus, and the
   * caller applies it to this process (the only replica) itself.
   */
  const orgRateLimits = new Map<string, StoredLimit>();
  const keyRateLimits = new Map<string, { orgId: string; limit: StoredLimit }>();
  /** Per credential: its window (epoch ms), what it granted, and the replicas that leased from it. */
  const rateWindows = new Map<string, { start: number; windowMs: number; used: number; replicas: Set<string> }>();

  // Sessions of tokens nobody logs out of would otherwise stay forever.
  const sweeper = setInterval(() => {
    const t = now();
    for (const session of sessions.values()) if (session.expiresAt <= t) forgetSession(session);
    for (const [key, counter] of counters) if (counter.resetAt <= t) counters.delete(key);
    for (const [name, known] of knownSets) if (known.expiresAt <= t) knownSets.delete(name);
    for (const [id, window] of rateWindows) if (window.start + window.windowMs <= t) rateWindows.delete(id);
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();

  function keyOf(orgId: string, keyId: string): ApiKeyRecord | undefined {
    const hash = keyHashesByOrg.get(orgId)?.get(keyId);
    return hash === undefined ? undefined : keysByHash.get(hash);
  }

  function forgetKey(orgId: string, key: ApiKeyRecord): void {
    keyHashesByOrg.get(orgId)?.delete(key.id);
    keysByHash.delete(key.hash);
    lastUsedByKey.delete(key.id);
  }

  /** A key as listApiKeys shows it: no hash, no organization; with its last recorded use. */
  function summaryOf(key: ApiKeyRecord): ApiKeySummary {
    const lastUsedAt = lastUsedByKey.get(key.id);
    return {
      id: key.id,
      displayPrefix: key.displayPrefix,
      createdAt: key.createdAt,
      ...(key.name !== undefined && { name: key.name }),
      ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
      ...(key.scopes !== undefined && { scopes: key.scopes }),
      ...(lastUsedAt !== undefined && { lastUsedAt }),
    };
  }

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
      for (const [keyId, hash] of keyHashesByOrg.get(orgId) ?? []) {
        keysByHash.delete(hash);
        lastUsedByKey.delete(keyId);
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
      keyLimits.delete(orgId);
      return revoked;
    },

    async createApiKey(key, maxKeys) {
      restAfterOrganizationTag(key.hash, key.orgId, 'the API key'); // the Redis store's contract, kept here too
      const index = keyHashesByOrg.get(key.orgId);
      if (index === undefined) return 'no-organization';
      if (maxKeys !== undefined && index.size >= (keyLimits.get(key.orgId) ?? maxKeys)) return 'limit-reached';
      keysByHash.set(key.hash, withStoredScopes(key));
      index.set(key.id, key.hash);
      return 'created';
    },

    async findApiKeyByHash(hash) {
      const key = keysByHash.get(hash);
      if (key === undefined) return undefined;
      return {
        id: key.id,
        orgId: key.orgId,
        hash: key.hash,
        ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
        ...(key.scopes !== undefined && { scopes: key.scopes }),
      };
    },

    async listApiKeys(orgId) {
      const summaries: ApiKeySummary[] = [];
      for (const hash of keyHashesByOrg.get(orgId)?.values() ?? []) {
        const key = keysByHash.get(hash);
        if (key !== undefined) summaries.push(summaryOf(key));
      }
      return summaries.sort(newestFirst);
    },

    async findApiKeySummary(orgId, keyId) {
      const key = keyOf(orgId, keyId);
      return key === undefined ? undefined : summaryOf(key);
    },

    async changeApiKey(orgId, keyId, change) {
      if (change.name === '') throw new Error('an API key\'s name must not be empty (null removes it)');
      const key = keyOf(orgId, keyId);
      if (key === undefined) return 'not-found';
      const terms = changedTerms(key, change);
      if (typeof terms === 'string') return terms;
      const { name: _name, expiresAt: _expiresAt, scopes: _scopes, ...rest } = key;
      const changed: ApiKeyRecord = { ...rest, ...terms };
      keysByHash.set(key.hash, changed);
      const termsChanged = !sameScopes(changed.scopes, key.scopes) || changed.expiresAt !== key.expiresAt;
      return { key: summaryOf(changed), revoked: termsChanged ? { kind: 'api_key', cacheKey: key.hash } : undefined };
    },

    async rollApiKey(orgId, keyId, roll) {
      const key = keyOf(orgId, keyId);
      const index = keyHashesByOrg.get(orgId);
      if (key === undefined || index === undefined) return 'not-found';
      restAfterOrganizationTag(roll.successor.hash, orgId, 'the API key');
      const successor: ApiKeyRecord = {
        ...roll.successor,
        orgId,
        ...(key.name !== undefined && { name: key.name }),
        ...(key.scopes !== undefined && { scopes: key.scopes }),
      };
      keysByHash.set(successor.hash, successor);
      index.set(successor.id, successor.hash);
      let rolled: ApiKeyRecord | undefined;
      if (roll.rolledKeyEnds === 'now') {
        forgetKey(orgId, key);
      } else {
        rolled = { ...key, expiresAt: Math.min(key.expiresAt ?? Infinity, roll.rolledKeyEnds) };
        keysByHash.set(key.hash, rolled);
      }
      return { successor: summaryOf(successor), rolled: rolled && summaryOf(rolled), revoked: { kind: 'api_key', cacheKey: key.hash } };
    },

    async pruneExpiredApiKeys(orgId, before) {
      let pruned = 0;
      for (const hash of [...(keyHashesByOrg.get(orgId)?.values() ?? [])]) {
        const key = keysByHash.get(hash);
        if (key?.expiresAt !== undefined && key.expiresAt < before) {
          forgetKey(orgId, key);
          pruned++;
        }
      }
      return pruned;
    },

    async recordApiKeyUse(uses) {
      for (const { orgId, keyId, at } of uses) {
        if (keyOf(orgId, keyId) !== undefined && (lastUsedByKey.get(keyId) ?? -Infinity) < at) lastUsedByKey.set(keyId, at);
      }
    },

    async deleteApiKeyIfOwned(orgId, keyId) {
      const key = keyOf(orgId, keyId);
      if (key === undefined) return undefined;
      forgetKey(orgId, key);
      return { kind: 'api_key', cacheKey: key.hash };
    },

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

    ...audit,

    async readKeyLimit(orgId) {
      return keyLimits.get(orgId);
    },

    async setKeyLimit(orgId, limit) {
      if (!orgsById.has(orgId)) return false;
      if (limit === null) keyLimits.delete(orgId);
      else keyLimits.set(orgId, limit);
      return true;
    },

    async readRateLimits() {
      return { organizations: new Map(orgRateLimits), keys: new Map(keyRateLimits) };
    },

    async setRateLimit(target, limit) {
      if (target.kind === 'organization') {
        if (limit === null) orgRateLimits.delete(target.orgId);
        else orgRateLimits.set(target.orgId, limit);
      } else if (limit === null) {
        keyRateLimits.delete(target.keyId);
      } else {
        keyRateLimits.set(target.keyId, { orgId: target.orgId, limit });
      }
    },

    async dropRateLimits(orgId) {
      orgRateLimits.delete(orgId);
      for (const [keyId, { orgId: owner }] of keyRateLimits) if (owner === orgId) keyRateLimits.delete(keyId);
    },

    // Synchronous from start to end, as countAttempt: no other lease runs between check and count.
    async leaseRateBudget({ credentialId, limit, windowMs, want, replica }) {
      const t = now();
      let window = rateWindows.get(credentialId);
      if (window === undefined || window.windowMs !== windowMs || t >= window.start + window.windowMs) {
        window = { start: t, windowMs, used: 0, replicas: new Set() };
        rateWindows.set(credentialId, window);
      }
      const granted = grantOf(want, limit - window.used);
      window.used += granted;
      window.replicas.add(replica);
      return { granted, used: window.used, resetInMs: window.start + window.windowMs - t, replicas: window.replicas.size };
    },

    // The organization listing (organization-listing.ts): a scan of the map, filtered and sorted.
    listOrganizations: async (query) => listOrganizationsIn(orgsById.values(), query),

    async ping() {},

    async close() {
      clearInterval(sweeper);
    },
  };
}

/** Scope names as a store keeps them: sorted, without duplicates (storedScopes). */
function withStoredScopes(key: ApiKeyRecord): ApiKeyRecord {
  const scopes = storedScopes(key.scopes);
  return scopes === undefined ? key : { ...key, scopes };
}
